import { describe, expect, it } from "vitest";
import { readChatStructured } from "../../../src/dialects/chat-completions/structured-request.js";
import { unansweredChatParameters } from "../../../src/dialects/chat-completions/unsupported-parameters.js";
import { readResponseStructured } from "../../../src/dialects/responses/structured-request.js";
import { unansweredResponseParameters } from "../../../src/dialects/responses/unsupported-parameters.js";
import { checkStructuredSchema } from "../../../src/dialects/structured-parameters.js";
import { InvalidRequestError, ServiceUnavailableError } from "../../../src/errors/adapter-error.js";
import { SchemaValidation } from "../../../src/structured/schema-validator.js";

const validation = new SchemaValidation({ maxBytes: 65_536, maxDepth: 24 });
const check = (schema: Record<string, unknown>) => validation.check(schema);
const schema = { type: "object", properties: { title: { type: "string" } }, required: ["title"], additionalProperties: false };
const user = [{ role: "user", content: "Q?" }];
const chatTool = (name: string, parameters: unknown = schema) => ({ type: "function", function: { name, description: `The ${name}`, parameters } });
const responseTool = (name: string, parameters: unknown = schema) => ({ type: "function", name, description: `The ${name}`, parameters });

/** The 400 a read throws, as the client would see its fields. */
function refusal(read: () => unknown): { param: string | null; code: string | null; message: string } {
  try {
    read();
  } catch (error) {
    if (error instanceof InvalidRequestError) return { param: error.param, code: error.code, message: error.message };
    throw error;
  }
  throw new Error("no 400");
}

describe("readChatStructured", () => {
  it("reads response_format json_schema: its name, description and schema", () => {
    const body = { messages: user, response_format: { type: "json_schema", json_schema: { name: "note", description: "A note", strict: true, schema } } };
    expect(readChatStructured(body, check)).toEqual({ kind: "json_schema", name: "note", description: "A note", schema, param: "response_format" });
  });

  it("reads json_object without a schema, and leaves text and unknown types to prose", () => {
    expect(readChatStructured({ messages: user, response_format: { type: "json_object" } }, check)).toMatchObject({ kind: "json_object", schema: null });
    expect(readChatStructured({ messages: user, response_format: { type: "text" } }, check)).toBeNull();
    expect(readChatStructured({ messages: user, response_format: { type: "grammar" } }, check)).toBeNull();
    expect(readChatStructured({ messages: user }, check)).toBeNull();
  });

  it("reads a forced function, named or the one tool under required, with its parameters as the schema", () => {
    const named = { messages: user, tools: [chatTool("a"), chatTool("b")], tool_choice: { type: "function", function: { name: "b" } } };
    expect(readChatStructured(named, check)).toEqual({ kind: "function", name: "b", description: "The b", schema, param: "tool_choice" });
    expect(readChatStructured({ messages: user, tools: [chatTool("a")], tool_choice: "required" }, check)).toMatchObject({ kind: "function", name: "a" });
    expect(readChatStructured({ messages: user, tools: [chatTool("a")], tool_choice: "auto" }, check)).toBeNull();
  });

  it("refuses with a 400 naming the parameter: a hostile schema, a format and a function together, an unknown function, a tool's result last", () => {
    const hostile = { messages: user, response_format: { type: "json_schema", json_schema: { name: "x", schema: { $ref: "https://evil.example/s.json" } } } };
    expect(refusal(() => readChatStructured(hostile, check))).toMatchObject({ param: "response_format", code: "invalid_json_schema", message: expect.stringContaining("/$ref") });
    const both = { messages: user, response_format: { type: "json_object" }, tools: [chatTool("a")], tool_choice: "required" };
    expect(refusal(() => readChatStructured(both, check)).param).toBe("tool_choice");
    const unknown = { messages: user, tools: [chatTool("a")], tool_choice: { type: "function", function: { name: "z" } } };
    expect(refusal(() => readChatStructured(unknown, check)).message).toContain("'z'");
    const afterResult = { messages: [...user, { role: "assistant", tool_calls: [] }, { role: "tool", tool_call_id: "c", content: "42" }], tools: [chatTool("a")], tool_choice: "required" };
    expect(refusal(() => readChatStructured(afterResult, check)).param).toBe("messages");
    const badParameters = { messages: user, tools: [chatTool("a", { type: "string", pattern: "(a)\\1" })], tool_choice: "required" };
    expect(refusal(() => readChatStructured(badParameters, check)).param).toBe("tools");
  });

  it("still names what stays unanswered: required among several tools, a custom tool, a legacy function_call", () => {
    expect(unansweredChatParameters({ tools: [chatTool("a"), chatTool("b")], tool_choice: "required" })[0]?.message).toContain("2 tools");
    expect(unansweredChatParameters({ tools: [{ type: "custom", custom: { name: "c" } }], tool_choice: { type: "custom", custom: { name: "c" } } })).toHaveLength(1);
    expect(unansweredChatParameters({ function_call: { name: "a" } })[0]?.param).toBe("function_call");
    expect(unansweredChatParameters({ tools: [chatTool("a")], tool_choice: "required", response_format: { type: "json_object" } })).toEqual([]);
  });
});

describe("readResponseStructured", () => {
  it("reads text.format json_schema and json_object", () => {
    const body = { input: "Q?", text: { format: { type: "json_schema", name: "output", strict: true, schema } } };
    expect(readResponseStructured(body, check)).toEqual({ kind: "json_schema", name: "output", description: null, schema, param: "text.format" });
    expect(readResponseStructured({ input: "Q?", text: { format: { type: "json_object" } } }, check)).toMatchObject({ kind: "json_object", param: "text.format" });
    expect(readResponseStructured({ input: "Q?", text: { format: { type: "text" } } }, check)).toBeNull();
  });

  it("reads a forced function", () => {
    const body = { input: "Q?", tools: [responseTool("a")], tool_choice: { type: "function", name: "a" } };
    expect(readResponseStructured(body, check)).toEqual({ kind: "function", name: "a", description: "The a", schema, param: "tool_choice" });
  });

  it("refuses a forced function after a function_call_output, and a hostile schema", () => {
    const body = { input: [{ role: "user", content: "Q?" }, { type: "function_call_output", call_id: "c", output: "42" }], tools: [responseTool("a")], tool_choice: "required" };
    expect(refusal(() => readResponseStructured(body, check)).param).toBe("input");
    const hostile = { input: "Q?", text: { format: { type: "json_schema", name: "o", schema: { type: "object", properties: { a: { maximum: { $data: "1/b" } } } } } } };
    expect(refusal(() => readResponseStructured(hostile, check))).toMatchObject({ param: "text.format", code: "invalid_json_schema" });
  });

  it("still names required among several tools", () => {
    expect(unansweredResponseParameters({ tools: [responseTool("a"), responseTool("b")], tool_choice: "required" })).toHaveLength(1);
    expect(unansweredResponseParameters({ tools: [responseTool("a")], tool_choice: "required" })).toEqual([]);
  });
});

describe("checkStructuredSchema", () => {
  const asked = readChatStructured({ messages: user, response_format: { type: "json_schema", json_schema: { name: "note", schema } } });

  it("refuses a schema the check finds a problem in: a 400 naming the parameter and the place", async () => {
    const problem = { pointer: "/properties/title", message: "uses a backreference" };
    const refused = await checkStructuredSchema(asked, () => Promise.resolve(problem)).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(InvalidRequestError);
    expect(refused).toMatchObject({ status: 400, param: "response_format", message: "Invalid schema for response_format 'note': the schema at /properties/title uses a backreference." });
  });

  it("answers a schema the worker was too busy to check with a retryable 503, not a 400: the schema is not at fault", async () => {
    const busy = { pointer: "", message: "The adapter is busy checking other schemas; try again shortly.", busy: true as const };
    const refused = await checkStructuredSchema(asked, () => Promise.resolve(busy)).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ServiceUnavailableError);
    expect(refused).toMatchObject({ status: 503, param: "response_format", message: busy.message, headers: { "retry-after": "1" } });
  });

  it("asks nothing when the request has no schema", async () => {
    await expect(checkStructuredSchema(null, () => Promise.reject(new Error("asked")))).resolves.toBeUndefined();
  });
});
