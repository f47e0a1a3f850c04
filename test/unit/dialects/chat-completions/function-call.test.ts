import { describe, expect, it } from "vitest";
import type { AnswerEvent } from "../../../../src/answer/answer-events.js";
import { ChatChunkEncoder } from "../../../../src/dialects/chat-completions/encode-chunks.js";
import { ChatCompletionEncoder } from "../../../../src/dialects/chat-completions/encode-completion.js";
import { encodingOf } from "../../../helpers/chat-encoding.js";
import { strictOpenAIErrors } from "../../../helpers/openai-schemas.js";

const args = '{"days": 25, "summary": "Leave is 25 days [1]."}';
const source = { filename: "leave.md", title: "Annual leave", page: null, snippet: "Employees get 25 days.", cited: true };
const events: AnswerEvent[] = [
  { type: "reasoning", choice: 0, text: "Looking for leave.", steps: ["Looking for leave."] },
  { type: "text", choice: 0, text: args },
  { type: "cited", choice: 0, citations: [{ source: 0, filename: "leave.md", start: 42, end: 45 }], sources: [source] },
  { type: "finished", choice: 0, queryId: "q1", usage: undefined },
];
const encoding = encodingOf({ stepsOutput: "reasoning", citationStyle: "annotations", annotations: "url_citation", call: { id: "call_q1", name: "record_leave" } });
const meta = { id: "chatcmpl-q1", created: 1, model: "ask", choices: 1 };
const usage = { promptTokens: 10, completionTokens: 5, reasoningTokens: 2 };

describe("a forced function's answer in chat completions", () => {
  it("is one tool call whose arguments are the JSON, with finish_reason tool_calls, content null and the sources beside it", () => {
    const encoder = new ChatCompletionEncoder(meta, encoding);
    for (const event of events) encoder.add(event);
    const body = encoder.body(usage);
    const [choice] = body.choices;
    expect(choice?.finish_reason).toBe("tool_calls");
    expect(choice?.message).toMatchObject({ content: null, annotations: [], sources: [source], reasoning_content: "Looking for leave." });
    expect(choice?.message.tool_calls).toEqual([{ id: "call_q1", type: "function", function: { name: "record_leave", arguments: args } }]);
    expect(strictOpenAIErrors("CreateChatCompletionResponse", body)).toEqual([]);
    expect(encoder.sent()).toEqual([{ content: args, reasoning: "Looking for leave." }]);
  });

  it("streams the call whole in one delta, and finishes with tool_calls", () => {
    const encoder = new ChatChunkEncoder(meta, encoding, false);
    const frames = [...encoder.open(), ...events.flatMap((event) => encoder.encode(event)), ...encoder.close(undefined)];
    const chunks = frames.filter((frame) => typeof frame.data === "object") as { data: { choices: { delta: Record<string, unknown>; finish_reason: string | null }[] } }[];
    const calls = chunks.flatMap((chunk) => chunk.data.choices.flatMap((choice) => (choice.delta.tool_calls as unknown[] | undefined) ?? []));
    expect(calls).toEqual([{ index: 0, id: "call_q1", type: "function", function: { name: "record_leave", arguments: args } }]);
    expect(chunks.at(-1)?.data.choices[0]?.finish_reason).toBe("tool_calls");
    for (const chunk of chunks) expect(strictOpenAIErrors("CreateChatCompletionStreamResponse", chunk.data)).toEqual([]);
  });
});
