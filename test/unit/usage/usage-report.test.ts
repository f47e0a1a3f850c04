import { describe, expect, it } from "vitest";
import { usageQuerySchema } from "../../../src/usage/usage-query.js";
import { pageDays, usagePage } from "../../../src/usage/usage-report.js";
import type { UsageTotal } from "../../../src/usage/usage-store.js";

const query = (input: Record<string, unknown>) => usageQuerySchema.parse(input);
const total = (day: string, account: string, workspace: string, mode: string, input: number, output: number, answers = 1): UsageTotal => ({
  day, account, workspace, mode, inputTokens: input, outputTokens: output, reasoningTokens: 0, answers,
});
// 2026-11-23 12:00 UTC, and the start of that day.
const noon = Date.UTC(2026, 10, 23, 12);
const day = (offset: number) => Date.UTC(2026, 10, 23 + offset) / 1000;

describe("the days of a usage page", () => {
  it("are the UTC days the range touches, up to now by default, `limit` at a time, from the page's cursor", () => {
    expect(pageDays(query({ start_time: day(-2) + 3600 }), noon)).toEqual({ days: ["2026-11-21", "2026-11-22", "2026-11-23"], more: false });
    expect(pageDays(query({ start_time: day(-2), end_time: day(0), limit: 1 }), noon)).toEqual({ days: ["2026-11-21"], more: true });
    expect(pageDays(query({ start_time: day(-2), end_time: day(0), limit: 1, page: "day_2026-11-22" }), noon)).toEqual({ days: ["2026-11-22"], more: false });
  });
});

describe("a usage page", () => {
  const totals = [
    total("2026-11-22", "team-search", "acme", "ask", 10, 20),
    total("2026-11-22", "litellm/alice", "acme", "reason", 5, 50, 2),
    total("2026-11-23", "team-search", "globex", "ask", 7, 3),
  ];

  it("sums every total of a day into one result when nothing is grouped, fields left null as OpenAI gives them", () => {
    const page = usagePage(query({ start_time: day(-1) }), ["2026-11-22", "2026-11-23"], false, totals);
    expect(page).toEqual({
      object: "page",
      has_more: false,
      next_page: null,
      data: [
        { object: "bucket", start_time: day(-1), end_time: day(0), results: [expect.objectContaining({ input_tokens: 15, output_tokens: 70, num_model_requests: 3, api_key_id: null, project_id: null, model: null })] },
        { object: "bucket", start_time: day(0), end_time: day(1), results: [expect.objectContaining({ input_tokens: 7, output_tokens: 3, num_model_requests: 1 })] },
      ],
    });
  });

  it("groups by key, workspace (project_id) and mode (model), filters, and gives the next page's cursor", () => {
    const page = usagePage(query({ start_time: day(-1), group_by: ["api_key_id", "model"], project_ids: "acme" }), ["2026-11-22"], true, totals);
    expect(page.data[0]?.results.map((result) => [result.api_key_id, result.model, result.project_id, result.output_tokens])).toEqual([
      ["litellm/alice", "reason", null, 50],
      ["team-search", "ask", null, 20],
    ]);
    expect(page).toMatchObject({ has_more: true, next_page: "day_2026-11-23" });
    expect(usagePage(query({ start_time: day(-1), user_ids: "someone" }), ["2026-11-22"], false, totals).data[0]?.results).toEqual([]);
    expect(usagePage(query({ start_time: day(-1), batch: "true" }), ["2026-11-22"], false, totals).data[0]?.results).toEqual([]);
  });

  it("reads lists repeated, bracketed or comma-separated, and refuses what OpenAI's API would not take", () => {
    expect(query({ start_time: "5", group_by: ["model", "api_key_id,project_id"] }).group_by).toEqual(["model", "api_key_id", "project_id"]);
    expect(usageQuerySchema.safeParse({ start_time: "5", end_time: "5" }).success).toBe(false);
    expect(usageQuerySchema.safeParse({ start_time: "5", limit: "32" }).success).toBe(false);
    expect(usageQuerySchema.safeParse({ start_time: "5", page: "anything" }).success).toBe(false);
  });
});
