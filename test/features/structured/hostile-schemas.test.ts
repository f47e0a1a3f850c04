import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatBody, headers, type Stack, startStack } from "../../helpers/start-stack.js";

// A hostile schema (deeply nested, huge, catastrophic pattern, $data, remote $ref) gets a 400
// naming the parameter, and never reaches the workspace (docs/structured-answers.md#the-schema-is-untrusted).

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

let deep: Record<string, unknown> = { type: "string" };
for (let level = 0; level < 13; level += 1) deep = { type: "object", properties: { a: deep } };
const defs: Record<string, unknown> = { d0: { type: "string" } };
for (let level = 1; level <= 40; level += 1) defs[`d${level}`] = { anyOf: [{ $ref: `#/$defs/d${level - 1}` }, { $ref: `#/$defs/d${level - 1}` }] };
const hostile: [string, Record<string, unknown>, RegExp][] = [
  ["deeply nested", deep, /nested more than 24 levels/],
  ["huge", { type: "object", description: "x".repeat(70_000) }, /longer than 65536/],
  ["a catastrophic pattern (a backreference)", { type: "object", properties: { a: { type: "string", pattern: "^(a+)+\\1$" } } }, /backreference/],
  ["a catastrophic pattern (a lookahead)", { type: "object", properties: { a: { type: "string", pattern: "^(?=(a+)+$)a*b" } } }, /linear time/],
  ["$data", { type: "object", properties: { a: { type: "number", maximum: { $data: "1/b" } } } }, /\$data/],
  ["a remote $ref", { type: "object", properties: { a: { $ref: "https://schemas.example.com/a.json" } } }, /remote references are never fetched/],
  ["definitions that expand exponentially", { $defs: defs, $ref: "#/$defs/d40" }, /more than 1000 subschemas/],
];

describe("hostile schemas", () => {
  it.each(hostile)("chat completions: %s is a 400 on response_format, before any workspace query", async (_name, schema, message) => {
    const before = stack.workspace.control.creates.length;
    const body = chatBody("Anything", { response_format: { type: "json_schema", json_schema: { name: "x", schema } } });
    const response = await fetch(`${stack.url}/v1/chat/completions`, { method: "POST", headers: headers(), body: JSON.stringify(body) });
    const parsed = (await response.json()) as { error: { param: string; code: string; message: string } };
    expect(response.status).toBe(400);
    expect(parsed.error).toMatchObject({ param: "response_format", code: "invalid_json_schema" });
    expect(parsed.error.message).toMatch(message);
    expect(response.headers.get("x-should-retry")).toBe("false");
    expect(stack.workspace.control.creates.length).toBe(before);
  });

  it.each(hostile)("Responses: %s is a 400 on text.format; a forced function's parameters on tools", async (_name, schema, message) => {
    const before = stack.workspace.control.creates.length;
    for (const [extra, param] of [
      [{ text: { format: { type: "json_schema", name: "x", schema } } }, "text.format"],
      [{ tools: [{ type: "function", name: "f", parameters: schema }], tool_choice: "required" }, "tools"],
    ] as const) {
      const response = await fetch(`${stack.url}/v1/responses`, { method: "POST", headers: headers(), body: JSON.stringify({ model: "ask", input: "Anything", ...extra }) });
      const parsed = (await response.json()) as { error: { param: string; message: string } };
      expect(response.status).toBe(400);
      expect(parsed.error.param).toBe(param);
      expect(parsed.error.message).toMatch(message);
    }
    expect(stack.workspace.control.creates.length).toBe(before);
  });
});
