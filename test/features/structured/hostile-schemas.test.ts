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

// A pattern's cost is its program, not its text: `x{1,1000}` repeated to 999 characters compiles into
// about 220,000 RE2 instructions (seconds of blocked event loop and 38 MB kept, each time). It is
// refused before it is compiled, after admission, so that the rate limits count it.
const HUGE_PROGRAM = "x{1,1000}".repeat(111).slice(0, 999);

describe("schemas that compile into huge programs", () => {
  const cases: [string, string, (schema: Record<string, unknown>, nonce: number) => Record<string, unknown>, string][] = [
    ["chat", "/v1/chat/completions", (schema, nonce) => chatBody(`Anything ${nonce}`, { response_format: { type: "json_schema", json_schema: { name: "x", schema } } }), "response_format"],
    ["Responses", "/v1/responses", (schema, nonce) => ({ model: "ask", input: `Anything ${nonce}`, text: { format: { type: "json_schema", name: "x", schema } } }), "text.format"],
    ["a forced function", "/v1/responses", (schema, nonce) => ({ model: "ask", input: `Anything ${nonce}`, tools: [{ type: "function", name: "f", parameters: schema }], tool_choice: "required" }), "tools"],
  ];

  it.each(cases)("%s: a 999-character pattern of counted repetitions is a 400 naming the parameter, the heap stays bounded", async (_name, path, bodyOf, param) => {
    const before = stack.workspace.control.creates.length;
    const heapBefore = process.memoryUsage().heapUsed;
    for (let nonce = 0; nonce < 4; nonce += 1) {
      // A different description each time: no cache can answer it.
      const schemas = [
        { type: "object", description: `d${nonce}`, properties: { a: { type: "string", pattern: HUGE_PROGRAM } } },
        { type: "object", description: `d${nonce}`, patternProperties: { [HUGE_PROGRAM]: { type: "string" } } },
      ];
      for (const schema of schemas) {
        const response = await fetch(`${stack.url}${path}`, { method: "POST", headers: headers(), body: JSON.stringify(bodyOf(schema, nonce)) });
        const parsed = (await response.json()) as { error: { param: string; code: string; message: string } };
        expect(response.status).toBe(400);
        expect(parsed.error).toMatchObject({ param, code: "invalid_json_schema" });
        expect(parsed.error.message).toMatch(/too large a program/);
      }
    }
    expect(stack.workspace.control.creates.length).toBe(before);
    // Eight such schemas compiled and kept would hold over 300 MB.
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(64 * 1024 * 1024);
    expect((await fetch(`${stack.url}/health`)).status).toBe(200);
  });

  it("a refused schema counts against RATE_LIMIT_RPM: it is checked after admission", async () => {
    const limited = await startStack({ RATE_LIMIT_RPM: "2" });
    try {
      const post = (body: unknown) => fetch(`${limited.url}/v1/chat/completions`, { method: "POST", headers: headers(), body: JSON.stringify(body) });
      for (let nonce = 0; nonce < 2; nonce += 1) {
        const schema = { type: "object", description: `d${nonce}`, properties: { a: { type: "string", pattern: HUGE_PROGRAM } } };
        const refused = await post(chatBody("Anything", { response_format: { type: "json_schema", json_schema: { name: "x", schema } } }));
        expect(refused.status).toBe(400);
        await refused.arrayBuffer();
      }
      const next = await post(chatBody("How much annual leave do employees get?"));
      expect(next.status).toBe(429);
      await next.arrayBuffer();
      expect(limited.workspace.control.creates.length).toBe(0);
    } finally {
      await limited.close();
    }
  });
});
