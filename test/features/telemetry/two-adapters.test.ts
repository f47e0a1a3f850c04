import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReceivedSpan } from "../../helpers/otlp-receiver.js";
import { chatBody, headers } from "../../helpers/start-stack.js";
import { startTracedStack, type TracedStack } from "../../helpers/traced-stack.js";

// Two traced adapters in one process (docs/observability.md): each owns its context (no global
// context manager), so answers asked of both at once export only to their own receiver, and every
// upstream call is the child of its own adapter's answer span — never of the other's.

let one: TracedStack;
let two: TracedStack;
beforeAll(async () => {
  [one, two] = await Promise.all([startTracedStack({}, {}, { workspace: { stepDelayMs: 30 } }), startTracedStack({}, {}, { workspace: { stepDelayMs: 30 } })]);
});
afterAll(async () => {
  await Promise.all([one?.close(), two?.close()]);
});

const trace = (digit: string) => digit.repeat(32);

async function ask(stack: TracedStack, traceDigit: string, stream: boolean): Promise<void> {
  const response = await fetch(`${stack.url}/v1/chat/completions`, {
    method: "POST",
    headers: headers({ traceparent: `00-${trace(traceDigit)}-${"b".repeat(16)}-01` }),
    body: JSON.stringify(chatBody("How many vacation days do employees get?", { stream })),
  });
  expect(response.status).toBe(200);
  await response.text();
}

/** Waits until every asked trace's answer span has been exported to `stack`'s receiver. */
async function answerSpans(stack: TracedStack, traces: string[]): Promise<ReceivedSpan[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const spans = await stack.flush();
    const answered = traces.every((id) => spans.some((span) => span.traceId === id && span.name === "chat ask"));
    if (answered || Date.now() > deadline) return spans;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("two traced adapters in one process", () => {
  it("trace apart: concurrent answers, each upstream call under its own adapter's answer span", async () => {
    const ofOne = ["1", "3", "5", "7"];
    const ofTwo = ["2", "4", "6", "8"];
    // Two creates of each adapter are cut after the query exists: those answers find their query by
    // listing (lost-create recovery, after awaits), still within their own answer's context.
    for (const stack of [one, two]) stack.workspace.control.inject({ on: "create", kind: "drop-after-create", times: 2 });
    // Interleaved, streamed and not: both adapters' answers and polls run in the same event loop at once.
    await Promise.all([...ofOne.map((digit, index) => ask(one, digit, index % 2 === 0)), ...ofTwo.map((digit, index) => ask(two, digit, index % 2 === 1))]);
    const [spansOne, spansTwo] = await Promise.all([answerSpans(one, ofOne.map(trace)), answerSpans(two, ofTwo.map(trace))]);
    for (const [spans, mine, theirs] of [
      [spansOne, ofOne, ofTwo],
      [spansTwo, ofTwo, ofOne],
    ] as const) {
      // Nothing of the other adapter's traces reached this receiver.
      expect(spans.filter((span) => theirs.map(trace).includes(span.traceId))).toEqual([]);
      for (const digit of mine) {
        const ofTrace = spans.filter((span) => span.traceId === trace(digit));
        const answer = ofTrace.find((span) => span.name === "chat ask") as ReceivedSpan;
        expect(answer, `the answer span of trace ${digit}`).toBeDefined();
        const creates = ofTrace.filter((span) => span.name === "POST /queries");
        expect(creates.length).toBeGreaterThanOrEqual(1);
        for (const create of creates) expect(create.parentSpanId).toBe(answer.spanId);
      }
      // Every upstream call this adapter traced has a parent it exported itself (its answer, or its own poll).
      const ids = new Set(spans.map((span) => span.spanId));
      const calls = spans.filter((span) => span.kind === "client" && span.name.endsWith(" /queries"));
      for (const call of calls) expect(ids.has(call.parentSpanId)).toBe(true);
      // The list calls: a poll's, or the recovery of a cut create (under that answer's span).
      const parents = spans.filter((span) => span.kind === "client" && span.name === "GET /queries").map((list) => spans.find((span) => span.spanId === list.parentSpanId)?.name);
      expect(parents).toContain("poll queries");
      expect(parents).toContain("chat ask");
      expect(parents.filter((name) => name !== "poll queries" && name !== "chat ask")).toEqual([]);
    }
  });
});
