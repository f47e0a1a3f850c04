import { createOpenAI } from "@ai-sdk/openai";
import { generateText, tool } from "ai";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { openAIErrors } from "../../helpers/openai-schemas.js";
import { API_KEY, chatBody, headers, type Stack, startStack } from "../../helpers/start-stack.js";

// What the workspace cannot do — choose among several tools, call a custom or hosted tool, a legacy
// function_call — is refused before any workspace query, with OpenAI's error shape, and each client
// that sends such a request raises an error carrying the adapter's message. What it can ignore is
// answered; JSON and one forced function are answered as structured answers (test/features/structured/).

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

const creates = () => stack.workspace.control.creates.length;
const TOOL_MESSAGE = /cannot call tools/;
const CHOICE_MESSAGE = /cannot choose among tools/;
const twoTools = [{ type: "function", function: { name: "lookup", parameters: {} } }, { type: "function", function: { name: "other", parameters: {} } }];

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
    ["tool_choice required among two tools", { tools: twoTools, tool_choice: "required" }, "tool_choice", CHOICE_MESSAGE],
    ["tool_choice naming a custom tool", { tools: [{ type: "custom", custom: { name: "grep" } }], tool_choice: { type: "custom", custom: { name: "grep" } } }, "tool_choice", /names the custom 'grep'/],
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
    ["tool_choice required among two tools", { tools: [{ type: "function", name: "lookup", parameters: {} }, { type: "function", name: "other", parameters: {} }], tool_choice: "required" }, "tool_choice", CHOICE_MESSAGE],
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
    const { body } = await post("/v1/chat/completions", chatBody("hi", { tools: twoTools, tool_choice: "required", functions: [{ name: "lookup" }], function_call: { name: "lookup" } }));
    expect(body.error.param).toBe("tool_choice");
    expect(body.error.message).toMatch(CHOICE_MESSAGE);
    expect(body.error.message).toMatch(/cannot call functions/);
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
      const chat = await post("/v1/chat/completions", chatBody("How much annual leave do employees get?", { tools: twoTools, tool_choice: "required", function_call: { name: "lookup" } }), {}, lenient.url);
      expect(chat.status).toBe(200);
      expect(chat.body.choices[0].message.content).toContain("25 days");
      expect(chat.headers.get("service-ignored-parameters")).toBe("tool_choice, function_call");
      // A forced function is a structured answer on both APIs (docs/structured-answers.md); a forced hosted tool is ignored.
      const forced = { tools: [{ type: "web_search_preview" }], tool_choice: { type: "web_search_preview" } };
      const responses = await post("/v1/responses", { model: "ask", input: "How much annual leave do employees get?", ...forced }, {}, lenient.url);
      expect(responses.status).toBe(200);
      expect(responses.body.output_text ?? JSON.stringify(responses.body.output)).toContain("25 days");
      expect(responses.headers.get("service-ignored-parameters")).toBe("tool_choice");
      const metrics = await (await fetch(`${lenient.url}/metrics`)).text();
      expect(metrics).toContain('adapter_ignored_parameters_total{param="tool_choice"} 2');
    } finally {
      await lenient.close();
    }
  });
});

describe("refusals, as each client raises them", () => {
  const openai = () => new OpenAI({ baseURL: `${stack.url}/v1`, apiKey: API_KEY, defaultHeaders: { "Service-Workspace": "acme" }, maxRetries: 0 });

  it("openai: tool_choice required among several tools raises a BadRequestError with the adapter's message", async () => {
    const before = creates();
    const forced = await errorOf(() =>
      openai().chat.completions.create({
        model: "ask",
        messages: [{ role: "user", content: "Look it up" }],
        tools: [
          { type: "function", function: { name: "lookup", parameters: { type: "object", properties: {} } } },
          { type: "function", function: { name: "other", parameters: { type: "object", properties: {} } } },
        ],
        tool_choice: "required",
      }),
    );
    expect(forced).toBeInstanceOf(OpenAI.BadRequestError);
    expect(forced.param).toBe("tool_choice");
    expect(forced.message).toMatch(CHOICE_MESSAGE);
    expect(creates() - before).toBe(0);
  });

  it("the AI SDK: toolChoice required among several tools raises an APICallError with the adapter's message", async () => {
    const before = creates();
    const openaiProvider = createOpenAI({ baseURL: `${stack.url}/v1`, apiKey: API_KEY, headers: { "Service-Workspace": "acme" } });
    const forced = await errorOf(() =>
      generateText({
        model: openaiProvider.chat("ask"),
        prompt: "Look it up",
        tools: {
          lookup: tool({ description: "Look something up", inputSchema: z.object({ what: z.string() }) }),
          other: tool({ description: "Something else", inputSchema: z.object({ what: z.string() }) }),
        },
        toolChoice: "required",
        maxRetries: 0,
      }),
    );
    expect(forced.name).toBe("AI_APICallError");
    expect(forced.message).toMatch(CHOICE_MESSAGE);
    expect(creates() - before).toBe(0);
  });
});
