import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { responseEventErrors, responsesErrors } from "../../helpers/openai-schemas.js";
import { openResponsesErrors, openResponsesEventErrors } from "../../helpers/open-responses-schemas.js";
import { postStream } from "../../helpers/read-sse.js";
import { waitFor } from "../../helpers/wait-for.js";
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

  it("refuses what a structured answer cannot be: several choices", async () => {
    expect((await post("/v1/chat/completions", chatBody(question, { response_format: format, n: 2 }))).body.error).toMatchObject({ param: "n" });
  });
});

describe("a structured Responses answer on the wire", () => {
  it("has one message with exactly one output_text, the JSON, with url_citation annotations into it, and echoes its text.format", async () => {
    const textFormat = { type: "json_schema", name: "note", strict: true, schema };
    const { status, body } = await post("/v1/responses", { model: "ask", input: question, text: { format: textFormat } });
    expect(status).toBe(200);
    expect(responsesErrors("Response", body)).toEqual([]);
    expect(openResponsesErrors("ResponseResource", body)).toEqual([]);
    // Echoed as sent, with `description: null` (none was sent), as OpenAI's API echoes it and Open Responses requires.
    expect(body.text).toEqual({ format: { ...textFormat, description: null } });
    const messages = body.output.filter((item: { type: string }) => item.type === "message");
    expect(messages).toHaveLength(1);
    expect(messages[0].content).toHaveLength(1);
    const [text] = messages[0].content;
    expect(JSON.parse(text.text).summary).toMatch(/\[1\]$/);
    expect(text.annotations.length).toBeGreaterThan(0);
    for (const annotation of text.annotations) expect([...text.text].slice(annotation.start_index, annotation.end_index).join("")).toMatch(/^\[\d+\]$/);
    const objectAsked = await post("/v1/responses", { model: "ask", input: question, text: { format: { type: "json_object" } } });
    expect(objectAsked.body.text).toEqual({ format: { type: "json_object" } });
  });

  const tools = [{ type: "function", name: "record_note", description: "Record a note", parameters: schema, strict: true }];

  it.each([
    ["tool_choice naming it", { type: "function", name: "record_note" }],
    ["required with one function", "required"],
  ])("answers a forced function (%s) as one function_call item whose arguments are the validated JSON", async (_name, toolChoice) => {
    const { status, body } = await post("/v1/responses", { model: "ask", input: question, tools, tool_choice: toolChoice });
    expect(status).toBe(200);
    expect(responsesErrors("Response", body)).toEqual([]);
    expect(openResponsesErrors("ResponseResource", body)).toEqual([]);
    expect(body.text).toEqual({ format: { type: "text" } });
    expect(body.output.filter((item: { type: string }) => item.type === "message")).toEqual([]);
    const calls = body.output.filter((item: { type: string }) => item.type === "function_call");
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ type: "function_call", name: "record_note", status: "completed", call_id: expect.stringMatching(/^call_/), id: expect.stringMatching(/^fc_/) });
    expect(JSON.parse(calls[0].arguments).summary).toMatch(/\[1\]$/);
    expect(calls[0].sources.length).toBeGreaterThan(0);
  });

  it("streams a forced function's call: the item added, its arguments in one delta, done, then the item done, each event as OpenAI publishes it", async () => {
    const stream = await postStream(`${stack.url}/v1/responses`, headers(), { model: "ask", input: question, tools, tool_choice: "required", stream: true });
    expect(stream.status).toBe(200);
    for (const event of stream.data) expect(responseEventErrors(event), event.type).toEqual([]);
    for (const event of stream.data) expect(openResponsesEventErrors(event), event.type).toEqual([]);
    const types = stream.data.map((event) => event.type as string);
    expect(types.filter((type) => type.startsWith("response.output_text") || type.startsWith("response.content_part"))).toEqual([]);
    const call = stream.data.filter((event) => event.item?.type === "function_call" || event.type.startsWith("response.function_call"));
    expect(call.map((event) => event.type)).toEqual([
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
    ]);
    const [added, delta, done, itemDone] = call;
    expect(added.item).toMatchObject({ type: "function_call", name: "record_note", arguments: "", status: "in_progress" });
    expect(delta.item_id).toBe(added.item.id);
    expect(done).toMatchObject({ name: "record_note", arguments: delta.delta, item_id: added.item.id });
    expect(itemDone.item).toMatchObject({ id: added.item.id, call_id: added.item.call_id, arguments: delta.delta, status: "completed" });
    expect(JSON.parse(done.arguments).summary).toMatch(/\[1\]$/);
    const completed = stream.data.at(-1);
    expect(completed.type).toBe("response.completed");
    expect(completed.response.output.at(-1)).toEqual(itemDone.item);
  });

  it.each([
    ["a JSON schema", { text: { format: { type: "json_schema", name: "note", schema } } }, "message"],
    ["a forced function", { tools, tool_choice: "required" }, "function_call"],
  ])("runs %s in the background: retrieved later, validated like any structured answer", async (_name, asked, itemType) => {
    const created = await post("/v1/responses", { model: "ask", input: question, background: true, ...asked });
    expect(created.status).toBe(200);
    expect(created.body.status).toBe("in_progress");
    let done: Record<string, any> = created.body;
    await waitFor(async () => {
      done = (await (await fetch(`${stack.url}/v1/responses/${created.body.id}`, { headers: headers() })).json()) as Record<string, any>;
      return done.status !== "in_progress";
    }, "the background response to end");
    expect(done.status).toBe("completed");
    expect(responsesErrors("Response", done)).toEqual([]);
    expect(openResponsesErrors("ResponseResource", done)).toEqual([]);
    const [item] = done.output.filter((candidate: { type: string }) => candidate.type === itemType);
    const json = itemType === "message" ? item.content[0].text : item.arguments;
    expect(JSON.parse(json).summary).toMatch(/\[1\]$/);
  });

  it("replays a stored forced function's response as it streamed", async () => {
    const { body } = await post("/v1/responses", { model: "ask", input: question, tools, tool_choice: "required" });
    const replayed = await fetch(`${stack.url}/v1/responses/${body.id}?stream=true`, { headers: headers() });
    const text = await replayed.text();
    expect(text).toContain("response.function_call_arguments.done");
    const retrieved = (await (await fetch(`${stack.url}/v1/responses/${body.id}`, { headers: headers() })).json()) as Record<string, any>;
    expect(retrieved.output).toEqual(body.output);
  });
});
