import { z } from "zod";

/** What OpenAI's Usage API groups by (`group_by`); the adapter has no users, batches or tiers: those stay null. */
export const GROUP_FIELDS = ["project_id", "user_id", "api_key_id", "model", "batch", "service_tier"] as const;
/** A field of `group_by`. */
export type GroupField = (typeof GROUP_FIELDS)[number];

/** A list parameter as clients send it: repeated (`group_by=a&group_by=b`), bracketed (`group_by[]=a`) or comma-separated (`a,b`). */
const list = z
  .union([z.string(), z.array(z.string())])
  .optional()
  .transform((value) => (value === undefined ? undefined : (Array.isArray(value) ? value : [value]).flatMap((item) => item.split(",")).map((item) => item.trim()).filter(Boolean)));

const unixSeconds = z.coerce.number().int().min(0).max(253_402_300_799);

/**
 * `GET /v1/organization/usage/completions`'s query (docs/governance.md#usage), as OpenAI's Usage
 * API reads it (its published parameters): the time range in Unix seconds, the bucket width, the
 * filters, `group_by`, the bucket count and the page cursor. Only day buckets exist here. A
 * parameter it does not know is refused (a filter misspelt, or sent in a form not read, would
 * otherwise answer with every row).
 */
export const usageQuerySchema = z.strictObject({
  start_time: unixSeconds,
  end_time: unixSeconds.optional(),
  bucket_width: z.string().default("1d"),
  project_ids: list,
  user_ids: list,
  api_key_ids: list,
  models: list,
  batch: z.enum(["true", "false"]).optional(),
  group_by: list.pipe(z.array(z.enum(GROUP_FIELDS)).optional()),
  limit: z.coerce.number().int().min(1).max(31).default(7),
  page: z.string().regex(/^day_\d{4}-\d{2}-\d{2}$/, "Input should be a next_page of an earlier answer").optional(),
}).refine((query) => query.end_time === undefined || query.end_time > query.start_time, {
  path: ["end_time"],
  message: "Input should be greater than start_time",
});

/** A usage query, validated. */
export type UsageQuery = z.output<typeof usageQuerySchema>;

/** `name[]` or `name[<index>]`: a list parameter as PHP-style and `qs` clients send it (`qs`'s default writes indices). */
const LIST_ITEM = /^([^[\]]+)\[(\d{0,9})\]$/;

/**
 * The query string as read (a repeated parameter is an array), with each list item folded into
 * its list: `name[]` and `name[0]`, `name[1]`… (in index order) join `name`, so that every
 * client's way of sending a list parses the same. Any other bracketed name (`name[a]`,
 * `name[0][b]`) is kept as it is, for the schema to refuse as a parameter it does not know.
 */
export function foldBrackets(query: Record<string, unknown>): Record<string, unknown> {
  const lists = new Map<string, { index: number; value: unknown }[]>();
  for (const [name, value] of Object.entries(query)) {
    const item = LIST_ITEM.exec(name);
    const plain = item ? (item[1] as string) : name;
    const list = lists.get(plain) ?? [];
    list.push({ index: item?.[2] ? Number(item[2]) : -1, value });
    lists.set(plain, list);
  }
  // No prototype: a parameter named `__proto__` is a key like any other (and refused as one).
  const folded: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const [name, list] of lists) {
    // Plain and `[]` items first, in their order (a stable sort), then the indexed ones by index.
    const values = list.sort((a, b) => a.index - b.index).map((item) => item.value);
    folded[name] = values.length === 1 ? values[0] : values.flat();
  }
  return folded;
}
