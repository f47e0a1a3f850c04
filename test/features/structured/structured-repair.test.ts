import { createOpenAI } from "@ai-sdk/openai";
import { ChatOpenAI } from "@langchain/openai";
import { generateObject } from "ai";
import OpenAI from "openai";
import { zodResponseFormat, zodTextFormat } from "openai/helpers/zod";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { postStream } from "../../helpers/read-sse.js";
import { API_KEY, chatBody, headers, type Stack, startStack } from "../../helpers/start-stack.js";

// A workspace that answers prose first and valid JSON on the repair turn, and one that never
// complies (docs/structured-answers.md#failure-modes): the embedded workspace's test switch.

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterEach(() => stack.workspace.control.answerJsonAs("trailing-sources"));
afterAll(() => stack.close());

const question = "How much annual leave do employees get?";
const note = z.object({ summary: z.string(), passages: z.number().int() });
const format = { type: "json_schema", json_schema: { name: "note", strict: true, schema: z.toJSONSchema(note) } };
/** The workspace turns since `before`: create bodies, with their query ids. */
const turnsSince = (before: number) => stack.workspace.control.creates.slice(before).map((entry) => entry.body as { id: string; content: string });

describe("a workspace that answers prose first", () => {
  it("gives the client the object from the repair turn, two turns in one thread, usage the sum of both", async () => {
    stack.workspace.control.answerJsonAs("prose");
    const before = stack.workspace.control.creates.length;
    const client = new OpenAI({ baseURL: `${stack.url}/v1`, apiKey: API_KEY, defaultHeaders: { "Service-Workspace": "acme" } });
    const completion = await client.chat.completions.parse({ model: "ask", messages: [{ role: "user", content: question }], response_format: zodResponseFormat(note, "note") });
    expect(note.parse(completion.choices[0]?.message.parsed)).toBeTruthy();
    const turns = turnsSince(before);
    expect(turns).toHaveLength(2);
    expect(new Set(turns.map((turn) => turn.id)).size).toBe(1);
    expect(turns[1]?.content).toContain("Your previous reply was not the JSON asked for: /: the answer does not start with a JSON object or array");
    // Both turns are counted: the same request answered at once counts less.
    const usageOf = async () => {
      const response = await fetch(`${stack.url}/v1/chat/completions`, { method: "POST", headers: headers(), body: JSON.stringify(chatBody(question, { response_format: format })) });
      return ((await response.json()) as { usage: { prompt_tokens: number; completion_tokens: number } }).usage;
    };
    const repaired = await usageOf();
    stack.workspace.control.answerJsonAs("trailing-sources");
    const once = await usageOf();
    expect(repaired.prompt_tokens).toBeGreaterThan(once.prompt_tokens);
    expect(repaired.completion_tokens).toBeGreaterThan(once.completion_tokens);
  });

  it("streams the steps of both turns as reasoning, then the JSON in one delta", async () => {
    stack.workspace.control.answerJsonAs("invalid-once");
    const stream = await postStream(`${stack.url}/v1/chat/completions`, headers(), chatBody(question, { stream: true, response_format: format }));
    const deltas = stream.data.filter((data) => data !== "[DONE]").flatMap((data) => data.choices.map((choice: any) => choice.delta));
    const content = deltas.filter((delta: any) => delta.content);
    expect(content).toHaveLength(1);
    expect(note.parse(JSON.parse(content[0].content))).toBeTruthy();
    const reasoning = deltas.map((delta: any) => delta.reasoning_content ?? "").join("");
    expect(reasoning).toContain("Correcting the JSON.");
  });
});

describe("a workspace that never complies", () => {
  it("is a 400 the openai SDK does not retry, after exactly two turns", async () => {
    stack.workspace.control.answerJsonAs("invalid-always");
    const before = stack.workspace.control.creates.length;
    // The SDK's default: two retries of what it may retry.
    const client = new OpenAI({ baseURL: `${stack.url}/v1`, apiKey: API_KEY, defaultHeaders: { "Service-Workspace": "acme" } });
    const error = await client.responses.parse({ model: "ask", input: question, text: { format: zodTextFormat(note, "note") } }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error).toMatchObject({ status: 400, code: "structured_output_failed", param: "text.format" });
    expect((error as Error).message).toMatch(/after 2 attempts: \/: Instance type "array" is invalid/);
    expect(turnsSince(before)).toHaveLength(2);
  });

  it("is not retried by LangChain's or the AI SDK's defaults either: two turns each", async () => {
    stack.workspace.control.answerJsonAs("invalid-always");
    const configuration = { baseURL: `${stack.url}/v1`, defaultHeaders: { "Service-Workspace": "acme" } };
    // LangChain's default: six retries of anything but 400-407, 409 and 413 (a 422 was asked seven times).
    const langchain = new ChatOpenAI({ model: "ask", apiKey: API_KEY, configuration });
    let before = stack.workspace.control.creates.length;
    await expect(langchain.withStructuredOutput(note, { name: "note" }).invoke(question)).rejects.toThrow(/structured|after 2 attempts/);
    expect(turnsSince(before)).toHaveLength(2);
    const provider = createOpenAI({ baseURL: `${stack.url}/v1`, apiKey: API_KEY, headers: { "Service-Workspace": "acme" } });
    before = stack.workspace.control.creates.length;
    await expect(generateObject({ model: provider.chat("ask"), schema: note, prompt: question })).rejects.toThrow(/after 2 attempts/);
    expect(turnsSince(before)).toHaveLength(2);
  });

  it("says x-should-retry: false on the wire", async () => {
    stack.workspace.control.answerJsonAs("invalid-always");
    const response = await fetch(`${stack.url}/v1/chat/completions`, { method: "POST", headers: headers(), body: JSON.stringify(chatBody(question, { response_format: format })) });
    expect(response.status).toBe(400);
    expect(response.headers.get("x-should-retry")).toBe("false");
    const body = (await response.json()) as { error: Record<string, unknown>; detail: unknown };
    expect(body.error).toMatchObject({ type: "invalid_request_error", code: "structured_output_failed", param: "response_format" });
    expect(body.detail).toBe(body.error.message);
  });

  it("ends a chat stream with an error chunk then [DONE], and a Responses stream with response.failed", async () => {
    stack.workspace.control.answerJsonAs("invalid-always");
    const chat = await postStream(`${stack.url}/v1/chat/completions`, headers(), chatBody(question, { stream: true, response_format: format }));
    expect(chat.data.at(-1)).toBe("[DONE]");
    expect(chat.data.at(-2)).toMatchObject({ error: { code: "structured_output_failed", param: "response_format" } });
    expect(chat.data.some((data) => data !== "[DONE]" && data.choices?.some((choice: any) => choice.delta?.content))).toBe(false);
    const responses = await postStream(`${stack.url}/v1/responses`, headers(), { model: "ask", input: question, stream: true, text: { format: { type: "json_schema", name: "note", schema: z.toJSONSchema(note) } } });
    const failed = responses.data.find((data) => data.type === "response.failed");
    expect(failed?.response.error).toMatchObject({ code: "server_error", message: expect.stringContaining("after 2 attempts") });
    expect(responses.data.some((data) => data.type === "response.completed")).toBe(false);
  });
});
