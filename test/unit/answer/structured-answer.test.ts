import { describe, expect, it } from "vitest";
import type { AnswerEvent, ChoiceSent } from "../../../src/answer/answer-events.js";
import type { Following, RunningAnswer } from "../../../src/answer/running-answer.js";
import { StructuredOutputError } from "../../../src/errors/adapter-error.js";
import { inProcessSchemas } from "../../../src/structured/schema-service.js";
import { structuredAnswer } from "../../../src/answer/structured-answer.js";
import type { StructuredRequest } from "../../../src/structured/structured-request.js";
import { UNTRACED_ANSWER } from "../../../src/telemetry/answer-trace.js";

const options = { validation: inProcessSchemas({ maxBytes: 65_536, maxDepth: 24 }), strip: false };
const request: StructuredRequest = {
  kind: "json_schema",
  name: "leave",
  description: null,
  schema: { type: "object", properties: { days: { type: "integer" }, summary: { type: "string" } }, required: ["days"] },
  param: "text.format",
};

/** A workspace turn that ends with `output`, after one step; its usage counts characters (prompt: 10). */
function turn(output: string, step: string) {
  const followed: Following[] = [];
  const counted: ChoiceSent[][] = [];
  const answer: RunningAnswer = {
    queryIds: ["q1"],
    trace: UNTRACED_ANSWER,
    async *events(following) {
      followed.push(following);
      yield { type: "reasoning", choice: 0, text: step, steps: [step] };
      yield { type: "text", choice: 0, text: output };
      yield { type: "cited", choice: 0, citations: [], sources: [] };
      yield { type: "finished", choice: 0, queryId: "q1", usage: undefined };
    },
    async usage(sent) {
      counted.push([...sent]);
      return { promptTokens: 10, completionTokens: (sent[0]?.content.length ?? 0) + (sent[0]?.reasoning.length ?? 0), reasoningTokens: sent[0]?.reasoning.length ?? 0 };
    },
  };
  return { answer, followed, counted };
}

/** The turns of a structured answer: `first`, and a repair that records the content it was asked with. */
function turnsOf(first: ReturnType<typeof turn>, second: ReturnType<typeof turn>) {
  const asked: string[] = [];
  return { asked, turns: { first: first.answer, repair: async (content: string) => (asked.push(content), second.answer) } };
}

async function eventsOf(answer: RunningAnswer, following: Following = "every-snapshot"): Promise<AnswerEvent[]> {
  const events: AnswerEvent[] = [];
  for await (const event of answer.events(following)) events.push(event);
  return events;
}

describe("structuredAnswer", () => {
  it("holds the text, and gives the encoder one text event with the JSON after the steps", async () => {
    const first = turn('{"days": 25, "summary": "Leave [1]."}\n\nSources:\n[1] leave.md', "Looking.");
    const { asked, turns } = turnsOf(first, turn("{}", "x"));
    const answer = structuredAnswer(turns, request, options);
    const events = await eventsOf(answer);
    expect(events.map((event) => event.type)).toEqual(["reasoning", "text", "cited", "finished"]);
    expect(events[1]).toEqual({ type: "text", choice: 0, text: '{"days": 25, "summary": "Leave [1]."}' });
    expect(events[2]).toMatchObject({ sources: [{ filename: "leave.md", cited: true }] });
    expect(first.followed).toEqual(["steps"]);
    expect(asked).toEqual([]);
  });

  it("runs the repair turn in the same thread when the first is prose, and sums both turns' usage", async () => {
    const first = turn("Employees get 25 days [1].", "Looking.");
    const second = turn('{"days": 25}', "Correcting.");
    const { asked, turns } = turnsOf(first, second);
    const answer = structuredAnswer(turns, request, options);
    const events = await eventsOf(answer, "final");
    expect(events.filter((event) => event.type === "reasoning").map((event) => event.type === "reasoning" && event.text)).toEqual(["Looking.", "\n\nCorrecting."]);
    expect(events.find((event) => event.type === "text")).toMatchObject({ text: '{"days": 25}' });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain("/: the answer does not start with a JSON object or array");
    const usage = await answer.usage([{ content: '{"days": 25}', reasoning: "Looking.\n\nCorrecting." }]);
    expect(first.counted).toEqual([[{ content: "Employees get 25 days [1].", reasoning: "Looking." }]]);
    expect(second.counted).toEqual([[{ content: '{"days": 25}', reasoning: "Correcting." }]]);
    expect(usage).toEqual({ promptTokens: 20, completionTokens: 26 + 8 + 12 + 11, reasoningTokens: 8 + 11 });
  });

  it("fails with structured_output_failed after the repair does not match either", async () => {
    const { asked, turns } = turnsOf(turn('{"days": "many"}', "a"), turn('{"days": "lots"}', "b"));
    const events = await eventsOf(structuredAnswer(turns, request, options));
    const failed = events.at(-1);
    expect(failed?.type).toBe("failed");
    const error = failed?.type === "failed" ? failed.error : null;
    expect(error).toBeInstanceOf(StructuredOutputError);
    expect(error?.message).toBe("The workspace's answer did not match the schema 'leave' after 2 attempts: /days: Instance type \"string\" is invalid. Expected \"integer\".");
    expect(events.some((event) => event.type === "text")).toBe(false);
    expect(asked).toHaveLength(1);
  });

  it("does not repair what asking again cannot fix", async () => {
    const refused = { ...request, schema: { type: "object", pattern: "(a)\\1" } };
    const { asked, turns } = turnsOf(turn('{"days": 1}', "a"), turn("{}", "b"));
    const events = await eventsOf(structuredAnswer(turns, refused, options));
    expect(events.at(-1)).toMatchObject({ type: "failed", error: { message: expect.stringContaining("asking again could not help") } });
    expect(asked).toEqual([]);
  });
});
