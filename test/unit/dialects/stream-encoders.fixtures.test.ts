import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { AnswerEvent, TokenUsage } from "../../../src/answer/answer-events.js";
import { sourceLinker } from "../../../src/answer/source-links.js";
import type { SseFrame } from "../../../src/core/sse-frame.js";
import { ChatChunkEncoder } from "../../../src/dialects/chat-completions/encode-chunks.js";
import { ChatCompletionEncoder } from "../../../src/dialects/chat-completions/encode-completion.js";
import { ResponseBodyEncoder } from "../../../src/dialects/responses/response-body-encoder.js";
import { ResponseStreamEncoder } from "../../../src/dialects/responses/response-stream-encoder.js";
import { metaOf } from "../../../src/dialects/responses/response-meta.js";
import { responseRequestSchema } from "../../../src/dialects/responses/response-request.js";
import { QueryFailedError, ServiceUnavailableError } from "../../../src/errors/adapter-error.js";
import { formatFrame } from "../../../src/http/sse-writer.js";
import { openAIErrors, responseEventErrors } from "../../helpers/openai-schemas.js";
import { openResponsesErrors, openResponsesEventErrors } from "../../helpers/open-responses-schemas.js";

// Recorded answer events in (test/fixtures/answers/*.events.json: the leave-policy query's snapshots
// through choice-progress, with one structured source), SSE frames out, checked by value against the
// recorded frames beside them and against OpenAI's vendored schemas. After an intended change of an
// encoder, RECORD_ENCODER_FIXTURES=1 rewrites the frames; review the diff before committing it.

const folder = new URL("../../fixtures/answers/", import.meta.url);
const events = JSON.parse(readFileSync(new URL("leave-policy.events.json", folder), "utf8")) as AnswerEvent[];
const usage: TokenUsage = { promptTokens: 12, completionTokens: 31, reasoningTokens: 14 };
const links = sourceLinker({ template: "https://docs.example.com/{workspace}/{filename}", documentPage: undefined }, "acme");
const chatMeta = { id: "chatcmpl-q1", created: 1_767_225_600, model: "ask", choices: 1 };
// The echo of a plain `{model: "ask"}` request, as the route makes it (url_citation, the default, linked through a template).
const citations = { format: "url_citation", links: { template: "https://docs.example.com/{workspace}/{filename}", documentPage: null, workspace: "acme" } } as const;
const request = responseRequestSchema({ maxMessages: 10 }).parse({ model: "ask", input: "Leave policy?" });
const responseMeta = metaOf("resp_0123456789abcdef", request, 1_767_225_600, null, citations);

/** The SSE text of an encoder's whole stream, as the writer sends it. */
function streamOf(encoder: { open(): SseFrame[]; encode(event: AnswerEvent): SseFrame[]; close(usage: TokenUsage | undefined): SseFrame[] }, withUsage: boolean): SseFrame[] {
  return [...encoder.open(), ...events.flatMap((event) => encoder.encode(event)), ...encoder.close(withUsage ? usage : undefined)];
}

/** The frames as recorded: compared by value (JSON), the exact text alongside. */
function expectRecorded(name: string, frames: SseFrame[]): void {
  const file = new URL(name, folder);
  const recorded = { text: frames.map(formatFrame).join(""), frames };
  if (process.env.RECORD_ENCODER_FIXTURES === "1") writeFileSync(file, `${JSON.stringify(recorded, null, 1)}\n`);
  expect(recorded).toEqual(JSON.parse(readFileSync(file, "utf8")));
}

const dataOf = (frames: SseFrame[]) => frames.map((frame) => frame.data).filter((data): data is Record<string, any> => typeof data === "object");

describe("chat completion chunks from recorded answer events", () => {
  const encoding = { stepsOutput: "reasoning", citationStyle: "annotations", annotations: "url_citation", links } as const;

  it("encode as recorded, each chunk valid, with usage last when asked for", () => {
    const frames = streamOf(new ChatChunkEncoder(chatMeta, encoding, true), true);
    expectRecorded("leave-policy.chat-chunks.json", frames);
    const chunks = dataOf(frames);
    for (const chunk of chunks) expect(openAIErrors("CreateChatCompletionStreamResponse", chunk)).toEqual([]);
    expect(frames.at(-1)).toEqual({ data: "[DONE]" });
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 12, completion_tokens: 31, total_tokens: 43 } });
    expect(chunks.slice(0, -1).every((chunk) => chunk.usage === undefined || chunk.usage === null)).toBe(true);
  });

  it("add up to exactly the non-streamed completion's content and reasoning", () => {
    const stream = dataOf(streamOf(new ChatChunkEncoder(chatMeta, encoding, false), false));
    const content = stream.map((chunk) => chunk.choices[0]?.delta?.content ?? "").join("");
    const reasoning = stream.map((chunk) => chunk.choices[0]?.delta?.reasoning_content ?? "").join("");
    const whole = new ChatCompletionEncoder(chatMeta, encoding);
    for (const event of events) whole.add(event);
    const body = whole.body(usage);
    expect(openAIErrors("CreateChatCompletionResponse", body)).toEqual([]);
    expect(content).toBe(body.choices[0]?.message.content);
    expect(reasoning).toBe(body.choices[0]?.message.reasoning_content);
    expect(stream.some((chunk) => chunk.usage)).toBe(false);
  });

  it("end a failed stream with an error frame and [DONE]", () => {
    const frames = new ChatChunkEncoder(chatMeta, encoding, true).fail(new QueryFailedError("The workspace query q1 failed"));
    expect(frames.at(-1)).toEqual({ data: "[DONE]" });
    expect(frames[0]?.data).toMatchObject({ error: { message: "The workspace query q1 failed" } });
  });
});

describe("Responses events from recorded answer events", () => {
  it("encode as recorded, each event valid for its type, numbered in order", () => {
    const frames = streamOf(new ResponseStreamEncoder(responseMeta, () => 1_767_225_601), true);
    expectRecorded("leave-policy.response-events.json", frames);
    const data = dataOf(frames);
    for (const event of data) expect(responseEventErrors(event as { type: string }), event.type).toEqual([]);
    for (const event of data) expect(openResponsesEventErrors(event as { type: string }), event.type).toEqual([]);
    expect(frames.every((frame) => frame.event === (frame.data as { type: string }).type)).toBe(true);
    expect(data.map((event) => event.sequence_number)).toEqual(data.map((_, index) => index));
    expect(data.at(0)?.type).toBe("response.created");
    expect(data.at(-1)).toMatchObject({ type: "response.completed", response: { status: "completed", usage: { input_tokens: 12, output_tokens: 31, total_tokens: 43 } } });
  });

  it("end a stream that fails after it began with an error event both OpenAI's and Open Responses' schemas accept", () => {
    const [frame] = new ResponseStreamEncoder(responseMeta, () => 1_767_225_601).fail(new ServiceUnavailableError("The workspace could not be reached"));
    const event = frame?.data as { type: string };
    expect(event).toMatchObject({ type: "error", message: "The workspace could not be reached", error: { message: "The workspace could not be reached" } });
    expect(responseEventErrors(event)).toEqual([]);
    expect(openResponsesEventErrors(event)).toEqual([]);
  });

  it("complete to the same response as the non-streamed encoder", () => {
    const stream = new ResponseStreamEncoder(responseMeta, () => 1_767_225_601);
    const completed = dataOf(streamOf(stream, true)).at(-1)?.response;
    const whole = new ResponseBodyEncoder(responseMeta, () => 1_767_225_601);
    for (const event of events) whole.add(event);
    expect(completed).toEqual(whole.body(usage));
    expect(openResponsesErrors("ResponseResource", completed)).toEqual([]);
  });
});
