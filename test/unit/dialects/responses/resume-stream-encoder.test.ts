import { describe, expect, it } from "vitest";
import type { AnswerEvent } from "../../../../src/answer/answer-events.js";
import { stepsSent } from "../../../../src/answer/choice-progress.js";
import { renderSteps } from "../../../../src/answer/render-steps.js";
import type { SseFrame } from "../../../../src/core/sse-frame.js";
import { ResponseStreamEncoder } from "../../../../src/dialects/responses/response-stream-encoder.js";
import { resumeStreamEncoder } from "../../../../src/dialects/responses/resume-stream-encoder.js";
import { metaOf } from "../../../../src/dialects/responses/response-meta.js";
import { responseRequestSchema } from "../../../../src/dialects/responses/response-request.js";

// A background answer taken over by another replica (docs/responses-api.md#background-mode): the
// encoder rebuilt from the log gives the same frames, with the same numbers, as the one that died.

// A background `{model: "reason"}` request's echo, as the route makes it.
const meta = { ...metaOf("resp_abc", responseRequestSchema({ maxMessages: 10 }).parse({ model: "reason", input: "Leave?" }), 1, null), background: true };
// The same, answering a forced function (docs/structured-answers.md#a-forced-function): its item is the call.
const callMeta = { ...meta, call: { name: "record_note" } };
const now = () => 2;

const events: AnswerEvent[] = [
  { type: "reasoning", choice: 0, text: "Using tool: search", steps: ["Using tool: search"] },
  { type: "reasoning", choice: 0, text: "\n\nReading", steps: ["Reading"] },
  { type: "text", choice: 0, text: "You get " },
  { type: "text", choice: 0, text: "25 days [1]." },
  { type: "cited", choice: 0, citations: [], sources: [] },
];

/** Every frame a fresh encoder writes for `events`, in order. */
function framesOf(encoder: ResponseStreamEncoder, list: AnswerEvent[]): SseFrame[] {
  return list.flatMap((event) => encoder.encode(event));
}

describe.each([
  ["a message", meta],
  ["a function call", callMeta],
])("resumeStreamEncoder, the answer %s", (_name, meta) => {
  for (const cut of [0, 1, 2, 3, 4]) {
    it(`carries on after ${cut} events with the frames the first encoder would have written`, () => {
      const original = new ResponseStreamEncoder(meta, now);
      const head = [...original.open(), ...framesOf(original, events.slice(0, cut))];
      const tail = [...framesOf(original, events.slice(cut)), ...original.close({ promptTokens: 1, completionTokens: 2, reasoningTokens: 1 })];
      const resumed = resumeStreamEncoder(meta, now, head);
      expect(resumed).not.toBeNull();
      const carried = [...framesOf(resumed as ResponseStreamEncoder, events.slice(cut)), ...(resumed as ResponseStreamEncoder).close({ promptTokens: 1, completionTokens: 2, reasoningTokens: 1 })];
      expect(carried).toEqual(tail);
    });
  }

  it("refuses a log that reached the citations, or one that is not its own", () => {
    const original = new ResponseStreamEncoder(meta, now);
    const cited = [...original.open(), ...framesOf(original, events)];
    expect(resumeStreamEncoder(meta, now, cited)).toBeNull();
    expect(resumeStreamEncoder(meta, now, cited.slice(1, 4))).toBeNull();
  });
});

describe("stepsSent", () => {
  it("counts the first steps that render to the reasoning already sent", () => {
    const steps = [{ text: "One" }, { tool: "search" }, { text: "Three" }];
    expect(stepsSent(steps, "")).toBe(0);
    expect(stepsSent(steps, renderSteps(steps.slice(0, 1)))).toBe(1);
    expect(stepsSent(steps, renderSteps(steps.slice(0, 2)))).toBe(2);
    expect(stepsSent(steps, renderSteps(steps))).toBe(3);
  });
});
