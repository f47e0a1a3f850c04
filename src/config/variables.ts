import { z } from "zod";

// The pieces every section's variables are built from (docs/configuration.md): a whole number
// with a default and bounds, text where an empty value means unset, and each variable's
// documentation attached to its schema.

/** A whole number between `min` and `max`, `fallback` when unset. */
export const integer = (fallback: number, min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

/** A whole number from `min`, or unset. */
export const optionalInteger = (min: number) => z.coerce.number().int().min(min).optional();

/** Text, trimmed; empty means unset. */
export const optionalText = z
  .string()
  .trim()
  .transform((value) => (value === "" ? undefined : value))
  .optional();

/** An http(s) URL, or unset. */
export const optionalHttpUrl = optionalText.pipe(z.url({ protocol: /^https?$/ }).optional());

/** A comma-separated list, its items trimmed, empty ones dropped. */
export const listOf = (value: string) =>
  value
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean);

/** What the configuration table (docs/configuration.md) and `--help` show of a variable: what it does, and its default as a reader should see it. */
export interface VariableDoc {
  meaning: string;
  shown: string;
}

/** A variable's schema with its documentation attached (read back by `variableDoc`). */
export function documented<T extends z.ZodType>(schema: T, meaning: string, shown?: string): T {
  return schema.meta({ description: meaning, shown: shown ?? defaultShown(schema) });
}

/** The documentation `documented` attached to a variable's schema. */
export function variableDoc(schema: z.ZodType): VariableDoc {
  const meta = schema.meta() as { description: string; shown: string };
  return { meaning: meta.description, shown: meta.shown };
}

function defaultShown(schema: z.ZodType): string {
  const def = schema._zod.def as { type: string; defaultValue?: unknown };
  if (def.type !== "default" || def.defaultValue === "" || def.defaultValue === undefined) return "unset";
  return `\`${String(def.defaultValue)}\``;
}

/** Adds a start-up error naming `variable` (the message `loadConfig` prints names it). */
export function issue(context: z.RefinementCtx, variable: string, message: string): void {
  context.addIssue({ code: "custom", path: [variable], message });
}
