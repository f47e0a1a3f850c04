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
 * filters, `group_by`, the bucket count and the page cursor. Only day buckets exist here.
 */
export const usageQuerySchema = z.object({
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

/**
 * The query string as read (a repeated or bracketed parameter is an array), with each
 * `name[]` folded into `name`, so that every client's way of sending a list parses the same.
 */
export function foldBrackets(query: Record<string, unknown>): Record<string, unknown> {
  const folded: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(query)) {
    const plain = name.endsWith("[]") ? name.slice(0, -2) : name;
    const earlier = folded[plain];
    folded[plain] = earlier === undefined ? value : [earlier, value].flat();
  }
  return folded;
}
