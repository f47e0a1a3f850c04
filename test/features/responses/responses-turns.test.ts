import { Agent, OpenAIResponsesModel, run, setTracingDisabled, tool } from "@openai/agents";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { responsesErrors } from "../../helpers/openai-schemas.js";
import { openResponsesErrors } from "../../helpers/open-responses-schemas.js";
import { API_KEY, headers, type Stack, startStack } from "../../helpers/start-stack.js";

// The turns of the Responses API beyond a question (docs/responses-api.md): a tool's result handed
// back after a forced function, a conversation compacted and continued from its compaction, the
// input tokens of a request counted, assistant messages' `phase`.

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

async function post(path: string, body: unknown, extra: Record<string, string> = {}) {
  const response = await fetch(`${stack.url}${path}`, { method: "POST", headers: headers(extra), body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

/** The create bodies the workspace received from here on. */
function upstream() {
  const before = stack.workspace.control.creates.length;
  return () => stack.workspace.control.creates.slice(before).map((entry) => entry.body as { id: string; content: string });
}

const question = "How much annual leave do employees get?";
const parameters = {
  type: "object",
  properties: { summary: { type: "string" }, topic: { type: "string" } },
  required: ["summary", "topic"],
  additionalProperties: false,
};
const tools = [{ type: "function", name: "record_note", description: "Record a note about a policy", parameters, strict: true }];
const forced = { type: "function", name: "record_note" };

describe("a tool's result handed back", () => {
  it("after previous_response_id, is the next turn of the query that asked for the call, naming the function, its arguments and its output", async () => {
    const creates = upstream();
    const first = await post("/v1/responses", { model: "ask", input: question, tools, tool_choice: forced });
    const call = first.body.output.find((item: { type: string }) => item.type === "function_call");
    expect(call).toMatchObject({ name: "record_note", call_id: expect.stringMatching(/^call_/) });
    const second = await post("/v1/responses", {
      model: "ask",
      previous_response_id: first.body.id,
      input: [{ type: "function_call_output", call_id: call.call_id, output: '{"saved":true}' }],
      tools,
    });
    expect(second.status).toBe(200);
    expect(responsesErrors("Response", second.body)).toEqual([]);
    expect(openResponsesErrors("ResponseResource", second.body)).toEqual([]);
    expect(second.body.output.at(-1)).toMatchObject({ type: "message", phase: "final_answer", status: "completed" });
    const [asked, handedBack] = creates();
    expect(handedBack?.id).toBe(asked?.id);
    expect(handedBack?.content).toBe(`The function record_note was called with ${call.arguments} and returned:\n{"saved":true}`);
  });

  it("in a full history without a stored response (store: false), continues the same query through the call's id", async () => {
    const creates = upstream();
    const userMessage = { type: "message", role: "user", content: question };
    const first = await post("/v1/responses", { model: "ask", input: [userMessage], tools, tool_choice: forced, store: false });
    const call = first.body.output.find((item: { type: string }) => item.type === "function_call");
    const history = [userMessage, ...first.body.output, { type: "function_call_output", call_id: call.call_id, output: "noted" }];
    const second = await post("/v1/responses", { model: "ask", input: history, tools, store: false });
    expect(second.status).toBe(200);
    const [asked, handedBack] = creates();
    expect(handedBack?.id).toBe(asked?.id);
    expect(handedBack?.content).toMatch(/^The function record_note was called with .* and returned:\nnoted$/s);
  });

  it("of a call the adapter did not make (another model's, in the history) starts a query with the question first", async () => {
    const creates = upstream();
    const input = [
      { type: "message", role: "user", content: question },
      { type: "function_call", call_id: "call_elsewhere", name: "lookup_policy", arguments: '{"topic":"leave"}' },
      { type: "function_call_output", call_id: "call_elsewhere", output: [{ type: "input_text", text: "25 days" }] },
    ];
    const { status } = await post("/v1/responses", { model: "ask", input });
    expect(status).toBe(200);
    expect(creates()[0]?.content).toBe(`${question}\n\nThe function lookup_policy was called with {"topic":"leave"} and returned:\n25 days`);
  });

  it("of a call nobody made is a 400 naming the input, and nothing is asked", async () => {
    const creates = upstream();
    const first = await post("/v1/responses", { model: "ask", input: question });
    const refused = await post("/v1/responses", {
      model: "ask",
      previous_response_id: first.body.id,
      input: [{ type: "function_call_output", call_id: "call_missing", output: "x" }],
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ param: "input", code: "invalid_value", message: expect.stringContaining("call_missing") });
    expect(creates()).toHaveLength(1);
  });

  it("ends the Agents SDK's default loop with a forced tool: the tool runs once, then a final answer with its citations", async () => {
    setTracingDisabled(true);
    const client = new OpenAI({ baseURL: `${stack.url}/v1`, apiKey: API_KEY, defaultHeaders: { "Service-Workspace": "acme" }, maxRetries: 0 });
    const calls: unknown[] = [];
    const recordNote = tool({
      name: "record_note",
      description: "Record a note about a policy",
      parameters: z.object({ summary: z.string(), topic: z.string() }),
      execute: async (args) => {
        calls.push(args);
        return "The note was recorded.";
      },
    });
    const agent = new Agent({
      name: "workspace",
      model: new OpenAIResponsesModel(client, "ask"),
      tools: [recordNote],
      modelSettings: { toolChoice: "record_note" },
    });
    const creates = upstream();
    const result = await run(agent, question);
    expect(calls).toHaveLength(1);
    expect(typeof result.finalOutput).toBe("string");
    expect((result.finalOutput as string).length).toBeGreaterThan(0);
    expect(result.newItems.map((item) => item.type)).toEqual(["reasoning_item", "tool_call_item", "tool_call_output_item", "reasoning_item", "message_output_item"]);
    const message = result.newItems.at(-1)?.rawItem as { content: { providerData?: { annotations?: { url: string }[] } }[] };
    expect(message.content[0]?.providerData?.annotations?.[0]?.url).toMatch(/^urn:workspace-document:acme:/);
    const [asked, handedBack] = creates();
    expect(handedBack?.id).toBe(asked?.id);
    expect(handedBack?.content).toMatch(/^The function record_note was called with .* and returned:\nThe note was recorded\.$/s);
  });
});

describe("compaction", () => {
  it("keeps the user's messages and one compaction item that carries the workspace thread into a new chain (openai SDK)", async () => {
    const client = new OpenAI({ baseURL: `${stack.url}/v1`, apiKey: API_KEY, defaultHeaders: { "Service-Workspace": "acme" }, maxRetries: 0 });
    const creates = upstream();
    const first = await client.responses.create({ model: "ask", input: question });
    const compacted = await client.responses.compact({ model: "ask", previous_response_id: first.id });
    expect(openResponsesErrors("CompactResource", compacted)).toEqual([]);
    expect(compacted).toMatchObject({ object: "response.compaction", usage: { output_tokens: 0 } });
    expect(compacted.usage.input_tokens).toBeGreaterThan(first.usage?.input_tokens ?? 0);
    expect(compacted.output.map((item) => item.type)).toEqual(["message", "compaction"]);
    const next = await client.responses.create({ model: "ask", input: [...(compacted.output as never[]), { role: "user", content: "Does unused leave carry over?" }] });
    expect(next.status).toBe("completed");
    const [asked, continued] = creates();
    expect(continued?.id).toBe(asked?.id);
    expect(continued?.content).toBe("Does unused leave carry over?");
  });

  it("of a conversation the workspace never answered carries no thread: the next turn is a new query", async () => {
    const input = [
      { type: "message", role: "user", content: "We agreed to launch on Tuesday." },
      { type: "message", role: "assistant", content: "Understood." },
    ];
    const compacted = await post("/v1/responses/compact", { model: "ask", prompt_cache_key: "k", input });
    expect(compacted.status).toBe(200);
    expect(openResponsesErrors("CompactResource", compacted.body)).toEqual([]);
    expect(compacted.body.output.map((item: { type: string; role?: string }) => item.role ?? item.type)).toEqual(["user", "compaction"]);
    const creates = upstream();
    const next = await post("/v1/responses", { model: "ask", input: [...compacted.body.output, { role: "user", content: question }] });
    expect(next.status).toBe(200);
    expect(creates()).toHaveLength(1);
  });

  it("requires a model (422), and is only good for the key and workspace that made it (404 elsewhere)", async () => {
    const missing = await post("/v1/responses/compact", { input: [{ role: "user", content: "x" }] });
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0]).toMatchObject({ loc: ["body", "model"], type: "missing" });
    const first = await post("/v1/responses", { model: "ask", input: question });
    const compacted = await post("/v1/responses/compact", { model: "ask", previous_response_id: first.body.id });
    const compaction = compacted.body.output.at(-1);
    expect(compaction.encrypted_content).not.toContain(stack.workspace.control.creates.at(-1)?.body.id);
    const input = [compaction, { role: "user", content: "And carry-over?" }];
    const elsewhere = await post("/v1/responses", { model: "ask", input }, { "service-workspace": "globex" });
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body.error).toMatchObject({ param: "input", code: "item_not_found" });
    expect((await post("/v1/responses", { model: "ask", input })).status).toBe(200);
  });
});

describe("POST /v1/responses/input_tokens", () => {
  it("counts what a response would count as usage.input_tokens, a forced function's instructions included (openai SDK)", async () => {
    const client = new OpenAI({ baseURL: `${stack.url}/v1`, apiKey: API_KEY, defaultHeaders: { "Service-Workspace": "acme" }, maxRetries: 0 });
    const answered = await client.responses.create({ model: "ask", input: question });
    const counted = await client.responses.inputTokens.count({ model: "ask", input: question });
    expect(counted).toEqual({ object: "response.input_tokens", input_tokens: answered.usage?.input_tokens });
    const withoutModel = await post("/v1/responses/input_tokens", { input: question });
    expect(withoutModel.body.input_tokens).toBe(counted.input_tokens);
    const structured = await post("/v1/responses/input_tokens", { input: question, tools, tool_choice: forced });
    expect(structured.body.input_tokens).toBeGreaterThan(counted.input_tokens);
  });
});

describe("phase", () => {
  it("is accepted on assistant messages and kept in the input items; another value is a 422", async () => {
    const input = [
      { type: "message", role: "assistant", phase: "commentary", content: "I should answer from the handbook." },
      { type: "message", role: "assistant", phase: "final_answer", content: "Employees get 25 days." },
      { type: "message", role: "user", content: question },
    ];
    const { status, body } = await post("/v1/responses", { model: "ask", input });
    expect(status).toBe(200);
    expect(body.output.at(-1).phase).toBe("final_answer");
    const items = (await (await fetch(`${stack.url}/v1/responses/${body.id}/input_items?order=asc`, { headers: headers() })).json()) as { data: { phase?: string }[] };
    expect(items.data.map((item) => item.phase)).toEqual(["commentary", "final_answer", undefined]);
    const refused = await post("/v1/responses", { model: "ask", input: [{ ...input[0], phase: "draft" }, input[2]] });
    expect(refused.status).toBe(422);
    expect(refused.body.detail[0].loc).toEqual(["body", "input", 0, "phase"]);
  });
});
