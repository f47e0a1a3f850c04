import type { z } from "zod";

/**
 * Text from another hand (a replica's pub/sub message, a stored record) read as JSON and then by
 * `schema`: its value, or undefined when the text is not JSON or does not fit. Never a throw, never
 * a cast: the caller says what becomes of what it could not read.
 */
export function parseJsonText<Schema extends z.ZodType>(schema: Schema, text: string): z.output<Schema> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
