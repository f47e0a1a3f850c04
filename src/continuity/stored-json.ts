import type { Logger } from "pino";
import type { z } from "zod";
import { errorMessage } from "../util/error-message.js";

/**
 * A record read back from a shared store (docs/architecture.md#continuity), parsed by its schema,
 * never cast: text that is not JSON, or JSON that does not fit, counts as absent (and is logged),
 * so that nothing a store gives back is trusted for more than its schema says.
 */
export function parseStored<Schema extends z.ZodType>(
  schema: Schema,
  text: string,
  what: string,
  logger: Logger,
): z.output<Schema> | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    logger.warn({ record: what, err: { message: errorMessage(error) } }, "stored record is not JSON: treated as absent");
    return null;
  }
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  logger.warn({ record: what, err: { message: parsed.error.message } }, "stored record does not parse: treated as absent");
  return null;
}
