import { describe, expect, it } from "vitest";
import type { AnswerEvent, TokenUsage } from "../../../src/answer/answer-events.js";
import type { RunningAnswer } from "../../../src/answer/running-answer.js";
import { auditRecord } from "../../../src/audit/audit-record.js";
import { observeAnswer } from "../../../src/audit/observed-answer.js";
import { UNTRACED_ANSWER } from "../../../src/telemetry/answer-trace.js";

const USAGE: TokenUsage = { promptTokens: 7, completionTokens: 11, reasoningTokens: 2 };

function runningAnswer(events: AnswerEvent[], count: () => Promise<TokenUsage> = async () => USAGE): RunningAnswer {
  return {
    queryIds: ["q-1"],
    trace: UNTRACED_ANSWER,
    async *events() {
      yield* events;
    },
    usage: count,
  };
}

const cited: AnswerEvent = { type: "cited", choice: 0, citations: [], sources: [{ name: "a.md" }, { name: "b.md" }] as never };

describe("an answer followed for the audit trail", () => {
  it("passes its events and usage through unchanged, and sees its sources, what it sent and its tokens", async () => {
    const { answer, seen } = observeAnswer(runningAnswer([{ type: "text", choice: 0, text: "Hi" }, cited]), "the question");
    const got: string[] = [];
    for await (const event of answer.events("every-snapshot")) got.push(event.type);
    expect(got).toEqual(["text", "cited"]);
    expect(await answer.usage([{ content: "Hi", reasoning: "" }])).toBe(USAGE);
    await seen.whenIdle();
    expect(seen).toMatchObject({ prompt: "the question", sources: 2, usage: USAGE, sent: [{ content: "Hi", reasoning: "" }], running: false });
    expect(answer.queryIds).toEqual(["q-1"]);
  });

  it("runs until its events end and the usage asked right after them is counted", async () => {
    let count!: (usage: TokenUsage) => void;
    const { answer, seen } = observeAnswer(runningAnswer([cited], () => new Promise((resolve) => (count = resolve))), "q");
    const events = answer.events("every-snapshot");
    await events.next();
    expect(seen.running).toBe(true);
    let idle = false;
    void seen.whenIdle().then(() => (idle = true));
    await events.next();
    const counting = answer.usage([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(idle).toBe(false);
    count(USAGE);
    await counting;
    await seen.whenIdle();
    expect(seen.usage).toBe(USAGE);
  });
});

describe("an audit record", () => {
  const input = {
    endedAt: Date.UTC(2026, 10, 23, 12),
    requestId: "req-1",
    account: "team-search",
    workspace: "acme",
    mode: "ask",
    route: "/v1/chat/completions",
    queryIds: ["q-1"],
    status: 200,
    background: false,
    durationMs: 12.4,
  };

  it("says who, where, how it went and what it cost; the text only when content is on", async () => {
    const { answer, seen } = observeAnswer(runningAnswer([cited]), "the question");
    for await (const _event of answer.events("final")) void _event;
    await answer.usage([{ content: "the answer", reasoning: "" }]);
    expect(auditRecord({ ...input, seen }, false)).toEqual({
      time: "2026-11-23T12:00:00.000Z",
      request_id: "req-1",
      key: "team-search",
      workspace: "acme",
      mode: "ask",
      dialect: "chat.completions",
      query_ids: ["q-1"],
      status: 200,
      completed: true,
      background: false,
      tokens: { input: 7, output: 11, reasoning: 2 },
      sources: 2,
      duration_ms: 12,
    });
    expect(auditRecord({ ...input, seen }, true)).toMatchObject({ question: "the question", answers: ["the answer"] });
  });

  it("of an answer that never ended says so, with no tokens", () => {
    expect(auditRecord({ ...input, route: "/mcp/{workspace}", status: 502, seen: undefined }, true)).toMatchObject({ dialect: "mcp", completed: false, tokens: null, sources: 0 });
  });
});
