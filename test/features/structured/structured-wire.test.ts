import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postStream } from "../../helpers/read-sse.js";
import { chatBody, headers, type Stack, startStack } from "../../helpers/start-stack.js";

// What a structured answer looks like on the wire (docs/structured-answers.md): the JSON alone as
// the content, its sources beside it, markers kept or stripped, a forced function as one tool call.

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

const question = "How much annual leave do employees get?";
const schema = {
  type: "object",
  properties: { summary: { type: "string" }, link: { type: "string", format: "uri" } },
  required: ["summary", "link"],
  additionalProperties: false,
};
const format = { type: "json_schema", json_schema: { name: "note", strict: true, schema } };

async function post(path: string, body: unknown, extra: Record<string, string> = {}) {
  const response = await fetch(`${stack.url}${path}`, { method: "POST", headers: headers(extra), body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

describe("a structured chat answer on the wire", () => {
  it("is the JSON alone, its annotations spanning markers inside its strings and linking to the sources, not to URLs the JSON claims", async () => {
    const { status, body } = await post("/v1/chat/completions", chatBody(question, { response_format: format }));
    expect(status).toBe(200);
    const message = body.choices[0].message;
    const value = JSON.parse(message.content);
    expect(value.summary).toMatch(/\[1\]$/);
    expect(message.sources.length).toBeGreaterThan(0);
    expect(message.annotations.length).toBeGreaterThan(0);
    for (const { url_citation: citation } of message.annotations) {
      expect([...message.content].slice(citation.start_index, citation.end_index).join("")).toMatch(/^\[\d+\]$/);
      expect(citation.url).toMatch(/^urn:workspace-document:acme:/);
      expect(citation.url).not.toBe(value.link);
    }
    expect(body.choices[0].finish_reason).toBe("stop");
  });

  it("strips the markers from the strings with X-Structured-Citations: strip, keeping the sources", async () => {
    const { body } = await post("/v1/chat/completions", chatBody(question, { response_format: format }), { "x-structured-citations": "strip" });
    const message = body.choices[0].message;
    expect(JSON.parse(message.content).summary).not.toMatch(/\[\d+\]/);
    expect(message.annotations).toEqual([]);
    expect(message.sources.some((source: { cited: boolean }) => source.cited)).toBe(true);
    const refused = await post("/v1/chat/completions", chatBody(question, { response_format: format }), { "x-structured-citations": "remove" });
    expect(refused.status).toBe(422);
    expect(refused.body.detail[0].loc).toEqual(["header", "x-structured-citations"]);
  });

  it("answers a forced function as one tool call, streamed whole in one delta", async () => {
    const tools = [{ type: "function", function: { name: "record_note", description: "Record a note", parameters: schema } }];
    const { body } = await post("/v1/chat/completions", chatBody(question, { tools, tool_choice: "required" }));
    expect(body.choices[0].finish_reason).toBe("tool_calls");
    expect(body.choices[0].message.content).toBeNull();
    const [call] = body.choices[0].message.tool_calls;
    expect(call).toMatchObject({ type: "function", function: { name: "record_note" } });
    expect(JSON.parse(call.function.arguments).summary).toMatch(/\[1\]$/);
    expect(body.choices[0].message.sources.length).toBeGreaterThan(0);
    const stream = await postStream(`${stack.url}/v1/chat/completions`, headers(), chatBody(question, { tools, tool_choice: { type: "function", function: { name: "record_note" } }, stream: true }));
    const choices = stream.data.filter((data) => data !== "[DONE]").flatMap((data) => data.choices);
    expect(choices.flatMap((choice: any) => choice.delta.tool_calls ?? [])).toHaveLength(1);
    expect(choices.at(-1).finish_reason).toBe("tool_calls");
  });

  it("refuses what a structured answer cannot be: several choices, a run in the background", async () => {
    expect((await post("/v1/chat/completions", chatBody(question, { response_format: format, n: 2 }))).body.error).toMatchObject({ param: "n" });
    const background = await post("/v1/responses", { model: "ask", input: question, background: true, text: { format: { type: "json_object" } } });
    expect(background.status).toBe(400);
    expect(background.body.error.param).toBe("background");
  });
});

describe("a structured Responses answer on the wire", () => {
  it("has one message with exactly one output_text, the JSON, with file_citation annotations into it", async () => {
    const { status, body } = await post("/v1/responses", { model: "ask", input: question, text: { format: { type: "json_schema", name: "note", schema } } });
    expect(status).toBe(200);
    const messages = body.output.filter((item: { type: string }) => item.type === "message");
    expect(messages).toHaveLength(1);
    expect(messages[0].content).toHaveLength(1);
    const [text] = messages[0].content;
    expect(JSON.parse(text.text).summary).toMatch(/\[1\]$/);
    for (const annotation of text.annotations) expect([...text.text][annotation.index]).toBe("[");
  });
});
