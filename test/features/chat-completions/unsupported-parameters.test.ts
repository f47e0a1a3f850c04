import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { ChatOpenAI } from "@langchain/openai";
import { generateObject, generateText, Output, tool } from "ai";
import OpenAI from "openai";
import { zodResponseFormat, zodTextFormat } from "openai/helpers/zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { openAIErrors } from "../../helpers/openai-schemas.js";
import { API_KEY, chatBody, headers, type Stack, startStack } from "../../helpers/start-stack.js";

// What the workspace cannot do — JSON that follows a schema, a JSON object, a forced tool call —
// is refused before any workspace query, with OpenAI's error shape, and each client that sends
// such a request raises an error carrying the adapter's message. What it can ignore is answered.

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

const creates = () => stack.workspace.control.creates.length;
const recipe = z.object({ name: z.string(), days: z.number() });
const SCHEMA_MESSAGE = /cannot return JSON that follows the schema/;
const OBJECT_MESSAGE = /cannot promise a JSON object/;
const TOOL_MESSAGE = /cannot call tools/;

/** The error a call raised (it must raise one). */
async function errorOf(call: () => Promise<unknown>): Promise<Error & Record<string, any>> {
  try {
    await call();
  } catch (error) {
    return error as Error & Record<string, any>;
  }
  throw new Error("the call did not raise an error");
}

async function post(path: string, body: unknown, extra: Record<string, string> = {}, url = stack.url) {
  const response = await fetch(`${url}${path}`, { method: "POST", headers: headers(extra), body: JSON.stringify(body) });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, any> };
}

describe("refusals, on the wire", () => {
  it.each([
    ["response_format json_schema", { response_format: { type: "json_schema", json_schema: { name: "recipe", strict: true, schema: { type: "object" } } } }, "response_format", SCHEMA_MESSAGE],
    ["response_format json_object", { response_format: { type: "json_object" } }, "response_format", OBJECT_MESSAGE],
    ["tool_choice required", { tools: [{ type: "function", function: { name: "lookup", parameters: {} } }], tool_choice: "required" }, "tool_choice", TOOL_MESSAGE],
    ["tool_choice naming a function", { tools: [{ type: "function", function: { name: "lookup", parameters: {} } }], tool_choice: { type: "function", function: { name: "lookup" } } }, "tool_choice", /names the function 'lookup'/],
    ["tool_choice allowed_tools required", { tool_choice: { type: "allowed_tools", allowed_tools: { mode: "required", tools: [] } } }, "tool_choice", TOOL_MESSAGE],
    ["function_call naming a function", { functions: [{ name: "lookup", parameters: {} }], function_call: { name: "lookup" } }, "function_call", /cannot call functions/],
  ])("chat completions: %s is a 400 naming the parameter, before any workspace query, never counted against the limits", async (_, extra, param, message) => {
    const before = creates();
    const { status, body, headers: responseHeaders } = await post("/v1/chat/completions", chatBody("How much annual leave do employees get?", extra));
    expect(status).toBe(400);
    expect(openAIErrors("ErrorResponse", body)).toEqual([]);
    expect(body.error).toMatchObject({ type: "invalid_request_error", param, code: "unsupported_value" });
    expect(body.error.message).toMatch(message);
    expect(body.detail).toBe(body.error.message);
    expect(responseHeaders.get("x-should-retry")).toBe("false");
    expect(creates() - before).toBe(0);
  });

  it.each([
    ["text.format json_schema", { text: { format: { type: "json_schema", name: "recipe", schema: { type: "object" } } } }, "text.format", SCHEMA_MESSAGE],
    ["text.format json_object", { text: { format: { type: "json_object" } } }, "text.format", OBJECT_MESSAGE],
    ["tool_choice required", { tools: [{ type: "function", name: "lookup", parameters: {} }], tool_choice: "required" }, "tool_choice", TOOL_MESSAGE],
    ["tool_choice naming a function", { tools: [{ type: "function", name: "lookup", parameters: {} }], tool_choice: { type: "function", name: "lookup" } }, "tool_choice", /names the function 'lookup'/],
    ["tool_choice naming a hosted tool", { tools: [{ type: "web_search_preview" }], tool_choice: { type: "web_search_preview" } }, "tool_choice", /a 'web_search_preview' tool/],
  ])("Responses: %s is a 400 naming the parameter, before any workspace query", async (_, extra, param, message) => {
    const before = creates();
    const { status, body } = await post("/v1/responses", { model: "ask", input: "How much annual leave do employees get?", ...extra });
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ type: "invalid_request_error", param, code: "unsupported_value" });
    expect(body.error.message).toMatch(message);
    expect(creates() - before).toBe(0);
  });

  it("names every problem of a request in its message, the first in param", async () => {
    const { body } = await post("/v1/chat/completions", chatBody("hi", { response_format: { type: "json_object" }, tool_choice: "required" }));
    expect(body.error.param).toBe("response_format");
    expect(body.error.message).toMatch(OBJECT_MESSAGE);
    expect(body.error.message).toMatch(TOOL_MESSAGE);
  });
});

describe("still answered", () => {
  it.each([
    ["tools offered with tool_choice auto", { tools: [{ type: "function", function: { name: "lookup", parameters: {} } }], tool_choice: "auto" }],
    ["tools offered with tool_choice none", { tools: [{ type: "function", function: { name: "lookup", parameters: {} } }], tool_choice: "none" }],
    ["tools offered without tool_choice", { tools: [{ type: "function", function: { name: "lookup", parameters: {} } }], parallel_tool_calls: true }],
    ["function_call auto", { functions: [{ name: "lookup", parameters: {} }], function_call: "auto" }],
    ["response_format text", { response_format: { type: "text" } }],
    ["sampling parameters", { temperature: 0.2, top_p: 0.9, presence_penalty: 0.5, frequency_penalty: 0.5, seed: 7, stop: ["\n\n\n"], max_tokens: 50, logit_bias: { "50256": -100 }, user: "u-1" }],
  ])("chat completions with %s", async (_, extra) => {
    const { status, body, headers: responseHeaders } = await post("/v1/chat/completions", chatBody("How much annual leave do employees get?", extra));
    expect(status).toBe(200);
    expect(body.choices[0].message.content).toContain("25 days");
    expect(responseHeaders.get("service-ignored-parameters")).toBeNull();
  });

  it.each([
    ["tools with tool_choice auto", { tools: [{ type: "function", name: "lookup", parameters: {} }], tool_choice: "auto" }],
    ["text.format text", { text: { format: { type: "text" } } }],
    ["sampling parameters", { temperature: 0.2, top_p: 0.9, max_output_tokens: 50 }],
  ])("Responses with %s", async (_, extra) => {
    const { status, body } = await post("/v1/responses", { model: "ask", input: "How much annual leave do employees get?", ...extra });
    expect(status).toBe(200);
    expect(body.output_text ?? JSON.stringify(body.output)).toContain("25 days");
  });

  it("with LENIENT_PARAMETERS=on, ignores them and says so in service-ignored-parameters", async () => {
    const lenient = await startStack({ LENIENT_PARAMETERS: "on" });
    try {
      const chat = await post("/v1/chat/completions", chatBody("How much annual leave do employees get?", { response_format: { type: "json_object" }, tool_choice: "required" }), {}, lenient.url);
      expect(chat.status).toBe(200);
      expect(chat.body.choices[0].message.content).toContain("25 days");
      expect(chat.headers.get("service-ignored-parameters")).toBe("response_format, tool_choice");
      const responses = await post("/v1/responses", { model: "ask", input: "How much annual leave do employees get?", text: { format: { type: "json_schema", name: "x", schema: {} } } }, {}, lenient.url);
      expect(responses.status).toBe(200);
      expect(responses.headers.get("service-ignored-parameters")).toBe("text.format");
      const metrics = await (await fetch(`${lenient.url}/metrics`)).text();
      expect(metrics).toContain('adapter_ignored_parameters_total{param="text.format"} 1');
    } finally {
      await lenient.close();
    }
  });
});

describe("refusals, as each client raises them", () => {
  const openai = () => new OpenAI({ baseURL: `${stack.url}/v1`, apiKey: API_KEY, defaultHeaders: { "Service-Workspace": "acme" }, maxRetries: 0 });

  it("openai: chat.completions.parse with zodResponseFormat raises a BadRequestError with the adapter's message", async () => {
    const before = creates();
    const error = await errorOf(() =>
      openai().chat.completions.parse({ model: "ask", messages: [{ role: "user", content: "A recipe, please" }], response_format: zodResponseFormat(recipe, "recipe") }),
    );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.status).toBe(400);
    expect(error.param).toBe("response_format");
    expect(error.message).toMatch(/cannot return JSON that follows the schema 'recipe'/);
    expect(creates() - before).toBe(0);
  });

  it("openai: responses.parse with zodTextFormat, and a forced tool, raise BadRequestErrors with the adapter's message", async () => {
    const before = creates();
    const parsed = await errorOf(() => openai().responses.parse({ model: "ask", input: "A recipe, please", text: { format: zodTextFormat(recipe, "recipe") } }));
    expect(parsed).toBeInstanceOf(OpenAI.BadRequestError);
    expect(parsed.message).toMatch(/text\.format type 'json_schema'/);
    const forced = await errorOf(() =>
      openai().chat.completions.create({
        model: "ask",
        messages: [{ role: "user", content: "Look it up" }],
        tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object", properties: {} } } }],
        tool_choice: "required",
      }),
    );
    expect(forced).toBeInstanceOf(OpenAI.BadRequestError);
    expect(forced.message).toMatch(/tool_choice 'required'/);
    expect(creates() - before).toBe(0);
  });

  it("LangChain: withStructuredOutput (JSON schema, its default here, and function calling) raises the adapter's message", async () => {
    const before = creates();
    const model = new ChatOpenAI({ model: "ask", apiKey: API_KEY, maxRetries: 0, configuration: { baseURL: `${stack.url}/v1`, defaultHeaders: { "Service-Workspace": "acme" } } });
    const viaSchema = await errorOf(() => model.withStructuredOutput(recipe, { name: "recipe" }).invoke("A recipe, please"));
    expect(viaSchema.message).toMatch(/cannot return JSON that follows the schema 'recipe'/);
    const viaTools = await errorOf(() => model.withStructuredOutput(recipe, { name: "recipe", method: "functionCalling" }).invoke("A recipe, please"));
    expect(viaTools.message).toMatch(/names the function 'recipe'/);
    const viaJsonMode = await errorOf(() => model.withStructuredOutput(recipe, { method: "jsonMode" }).invoke("A recipe as JSON, please"));
    expect(viaJsonMode.message).toMatch(OBJECT_MESSAGE);
    expect(creates() - before).toBe(0);
  });

  it("the AI SDK: generateObject with @ai-sdk/openai (chat and Responses) and @ai-sdk/openai-compatible raises an APICallError with the adapter's message", async () => {
    const before = creates();
    const settings = { baseURL: `${stack.url}/v1`, apiKey: API_KEY, headers: { "Service-Workspace": "acme" } };
    const openaiProvider = createOpenAI(settings);
    const compatible = createOpenAICompatible({ name: "workspace", ...settings });
    for (const [name, model, message] of [
      ["@ai-sdk/openai chat", openaiProvider.chat("ask"), SCHEMA_MESSAGE],
      ["@ai-sdk/openai Responses", openaiProvider("ask"), SCHEMA_MESSAGE],
      ["@ai-sdk/openai-compatible", compatible("ask"), OBJECT_MESSAGE],
    ] as const) {
      const error = await errorOf(() => generateObject({ model, schema: recipe, prompt: "A recipe, please", maxRetries: 0 }));
      expect(error.name, name).toBe("AI_APICallError");
      expect(error.statusCode, name).toBe(400);
      expect(error.message, name).toMatch(message);
    }
    const forced = await errorOf(() =>
      generateText({
        model: openaiProvider.chat("ask"),
        prompt: "Look it up",
        tools: { lookup: tool({ description: "Look something up", inputSchema: z.object({ what: z.string() }) }) },
        toolChoice: "required",
        maxRetries: 0,
      }),
    );
    expect(forced.message).toMatch(TOOL_MESSAGE);
    const structured = await errorOf(() => generateText({ model: openaiProvider.chat("ask"), prompt: "A recipe", output: Output.object({ schema: recipe }), maxRetries: 0 }));
    expect(structured.message).toMatch(SCHEMA_MESSAGE);
    expect(creates() - before).toBe(0);
  });
});
