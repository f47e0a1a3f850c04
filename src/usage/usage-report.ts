import { z } from "zod";
import { utcDayOf, utcDayStart } from "../util/utc-calendar.js";
import type { GroupField, UsageQuery } from "./usage-query.js";
import type { UsageTotal } from "./usage-store.js";

const DAY_MS = 86_400_000;

/** One result of a bucket, in the shape of OpenAI's `UsageCompletionsResult` (a workspace is a project, the account an API key, the mode a model). */
const completionsResultSchema = z.object({
  object: z.literal("organization.usage.completions.result"),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  input_cached_tokens: z.number().int(),
  input_audio_tokens: z.number().int(),
  output_audio_tokens: z.number().int(),
  num_model_requests: z.number().int(),
  project_id: z.string().nullable(),
  user_id: z.string().nullable(),
  api_key_id: z.string().nullable(),
  model: z.string().nullable(),
  batch: z.boolean().nullable(),
  service_tier: z.string().nullable(),
});

/** One page of OpenAI's Usage API (`UsageResponse`): day buckets of completions results. */
export const usagePageSchema = z.object({
  object: z.literal("page"),
  data: z.array(z.object({ object: z.literal("bucket"), start_time: z.number().int(), end_time: z.number().int(), results: z.array(completionsResultSchema) })),
  has_more: z.boolean(),
  next_page: z.string().nullable(),
});

type CompletionsResult = z.output<typeof completionsResultSchema>;
/** A page of the usage endpoint. */
export type UsagePage = z.output<typeof usagePageSchema>;

/**
 * The UTC days one page covers (docs/governance.md#usage): every day the range
 * [`start_time`, `end_time`) touches (`end_time` defaults to now), from the page's cursor on, at
 * most `limit` of them, and whether more follow.
 */
export function pageDays(query: UsageQuery, now: number): { days: string[]; more: boolean } {
  const first = utcDayStart(utcDayOf(query.start_time * 1000).name);
  const end = (query.end_time ?? Math.ceil(now / 1000)) * 1000;
  const from = query.page ? Math.max(first, utcDayStart(query.page.slice(4))) : first;
  const days: string[] = [];
  let day = from;
  while (day < end && days.length < query.limit) {
    days.push(utcDayOf(day).name);
    day += DAY_MS;
  }
  return { days, more: day < end };
}

/**
 * A page of day buckets from the totals of its days (pure): each bucket's results are the totals
 * that pass the filters, summed by the `group_by` fields (a workspace is a `project_id`, the account
 * an `api_key_id`, the mode a `model`); fields not grouped by are null, as OpenAI gives them.
 */
export function usagePage(query: UsageQuery, days: readonly string[], more: boolean, totals: readonly UsageTotal[]): UsagePage {
  const groups = new Set<GroupField>(query.group_by ?? []);
  const passes = (total: UsageTotal) =>
    (query.project_ids?.includes(total.workspace) ?? true) &&
    (query.api_key_ids?.includes(total.account) ?? true) &&
    (query.models?.includes(total.mode) ?? true) &&
    query.user_ids === undefined &&
    query.batch !== "true";
  const data = days.map((day) => {
    const results = new Map<string, CompletionsResult>();
    for (const total of totals) {
      if (total.day !== day || !passes(total)) continue;
      const project = groups.has("project_id") ? total.workspace : null;
      const key = groups.has("api_key_id") ? total.account : null;
      const model = groups.has("model") ? total.mode : null;
      const name = JSON.stringify([project, key, model]);
      const result = results.get(name) ?? emptyResult(project, key, model, groups.has("batch"));
      result.input_tokens += total.inputTokens;
      result.output_tokens += total.outputTokens;
      result.num_model_requests += total.answers;
      results.set(name, result);
    }
    const sorted = [...results.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, result]) => result);
    const start = utcDayStart(day) / 1000;
    return { object: "bucket" as const, start_time: start, end_time: start + DAY_MS / 1000, results: sorted };
  });
  const next = more && days.length > 0 ? `day_${utcDayOf(utcDayStart(days.at(-1) as string) + DAY_MS).name}` : null;
  return { object: "page", data, has_more: next !== null, next_page: next };
}

function emptyResult(project: string | null, key: string | null, model: string | null, byBatch: boolean): CompletionsResult {
  return {
    object: "organization.usage.completions.result",
    input_tokens: 0,
    output_tokens: 0,
    input_cached_tokens: 0,
    input_audio_tokens: 0,
    output_audio_tokens: 0,
    num_model_requests: 0,
    project_id: project,
    user_id: null,
    api_key_id: key,
    model,
    // Nothing here is a batch: grouped by it, every result says so.
    batch: byBatch ? false : null,
    service_tier: null,
  };
}
