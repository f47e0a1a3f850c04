import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { responseEventErrors, responsesErrors } from "../../helpers/openai-schemas.js";
import { openResponsesErrors, openResponsesEventErrors } from "../../helpers/open-responses-schemas.js";
import { postStream } from "../../helpers/read-sse.js";
import { API_KEY, headers, type Stack, startStack } from "../../helpers/start-stack.js";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

async function create(body: Record<string, unknown>, extraHeaders: Record<string, string> = {}) {
  const response = await fetch(`${stack.url}/v1/responses`, { method: "POST", headers: headers(extraHeaders), body: JSON.stringify(body) });
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

const get = async (path: string, extraHeaders: Record<string, string> = {}, method = "GET") => {
  const response = await fetch(`${stack.url}${path}`, { method, headers: headers(extraHeaders) });
  return { status: response.status, body: (await response.json()) as any };
};

/** The code points a citation's `index` starts at, up to the marker's end. */
const markerAt = (text: string, index: number) => {
  const rest = [...text].slice(index).join("");
  return /^(\[[^\]]+\]|【[^】]+】)/.exec(rest)?.[0];
};

describe("POST /v1/responses", () => {
  it("answers with a response object that validates, with the steps as reasoning and cited markers", async () => {
    const { status, headers: responseHeaders, body } = await create({ model: "reason", input: "How much annual leave do I get?", metadata: { team: "hr" } });
    expect(status).toBe(200);
    expect(responsesErrors("Response", body)).toEqual([]);
    expect(openResponsesErrors("ResponseResource", body)).toEqual([]);
    expect(body).toMatchObject({ object: "response", status: "completed", model: "reason", store: true, metadata: { team: "hr" } });
    expect(body.id).toMatch(/^resp_/);
    const [reasoning, message] = body.output;
    expect(reasoning).toMatchObject({ type: "reasoning", id: expect.stringMatching(/^rs_/) });
    expect(reasoning.summary[0].text).toContain("Using tool: search_documents");
    expect(message).toMatchObject({ type: "message", role: "assistant", status: "completed" });
    const [part] = message.content;
    expect(part.text).toContain("25 days");
    expect(part.annotations.length).toBeGreaterThan(0);
    // The default annotation: url_citation, spanning the marker, linked to the source (docs/citations.md#the-responses-api).
    for (const annotation of part.annotations) {
      expect(annotation).toMatchObject({ type: "url_citation", url: "urn:workspace-document:acme:handbook.md", title: expect.any(String) });
      const marker = markerAt(part.text, annotation.start_index);
      expect(marker).toMatch(/^\[(handbook\.md|\d+(, \d+)*)\]$/);
      expect(annotation.end_index - annotation.start_index).toBe([...(marker as string)].length);
    }
    expect(message.phase).toBe("final_answer");
    expect(body.usage.input_tokens).toBeGreaterThan(0);
    expect(body.usage.output_tokens).toBeGreaterThan(body.usage.output_tokens_details.reasoning_tokens);
    expect(body.usage.total_tokens).toBe(body.usage.input_tokens + body.usage.output_tokens);
    expect(responseHeaders.get("service-query-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("streams the whole event sequence, named, numbered, valid, ending with the stored response", async () => {
    const stream = await postStream(`${stack.url}/v1/responses`, headers(), { model: "ask", input: "How much annual leave do I get?", stream: true });
    expect(stream.status).toBe(200);
    const events = stream.data as any[];
    expect(stream.events.map((event) => event.event)).toEqual(events.map((event) => event.type));
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    for (const event of events) expect(responseEventErrors(event), event.type).toEqual([]);
    for (const event of events) expect(openResponsesEventErrors(event), event.type).toEqual([]);
    const types = events.map((event) => event.type);
    expect(types.slice(0, 4)).toEqual(["response.created", "response.in_progress", "response.output_item.added", "response.reasoning_summary_part.added"]);
    expect(types).toContain("response.output_text.annotation.added");
    expect(types.at(-1)).toBe("response.completed");
    const ids = new Set(events.filter((event) => event.response).map((event) => event.response.id));
    expect(ids.size).toBe(1);
    const completed = events.at(-1).response;
    const text = events.filter((event) => event.type === "response.output_text.delta").map((event) => event.delta).join("");
    expect(completed.output.at(-1).content[0].text).toBe(text);
    const stored = await get(`/v1/responses/${completed.id}`);
    expect(stored.body).toEqual(completed);
  });

  it("continues one upstream query across three chained responses", async () => {
    const before = stack.workspace.control.creates.length;
    const first = await create({ model: "ask", input: "How much annual leave do I get?" });
    const second = await create({ model: "ask", input: "Does it carry over?", previous_response_id: first.body.id });
    const third = await create({ model: "ask", input: "And remote work?", previous_response_id: second.body.id, instructions: "Be brief" });
    expect([first.status, second.status, third.status]).toEqual([200, 200, 200]);
    const creates = stack.workspace.control.creates.slice(before).map((entry) => entry.body.id);
    expect(new Set(creates).size).toBe(1);
    expect(third.body).toMatchObject({ previous_response_id: second.body.id, instructions: "Be brief" });
    expect(second.body.instructions).toBeNull();
  });

  it("answers 404 for an unknown previous response, or one of another credential or workspace", async () => {
    const mine = await create({ model: "ask", input: "leave" });
    const unknown = await create({ model: "ask", input: "x", previous_response_id: "resp_doesnotexist" });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ detail: expect.stringContaining("resp_doesnotexist"), error: { type: "not_found_error", param: "previous_response_id" } });
    const otherKey = await create({ model: "ask", input: "x", previous_response_id: mine.body.id }, { authorization: "Bearer sk-other-key" });
    expect(otherKey.status).toBe(404);
    const otherWorkspace = await create({ model: "ask", input: "x", previous_response_id: mine.body.id }, { "service-workspace": "globex" });
    expect(otherWorkspace.status).toBe(404);
    expect((await get(`/v1/responses/${mine.body.id}`, { authorization: "Bearer sk-other-key" })).status).toBe(404);
  });

  it("stores nothing with store: false", async () => {
    const { body } = await create({ model: "ask", input: "leave", store: false });
    expect(body.store).toBe(false);
    expect((await get(`/v1/responses/${body.id}`)).status).toBe(404);
  });

  it("refuses bad requests with the interface's 422 and an OpenAI error", async () => {
    const cases = [
      { model: "gpt-4o", input: "x" },
      { model: "ask" },
      { model: "ask", input: [] },
      { model: "ask", input: [{ role: "assistant", content: "only me" }] },
      { model: "ask", input: "x", metadata: Object.fromEntries(Array.from({ length: 17 }, (_, index) => [`k${index}`, "v"])) },
      { model: "ask", input: "x", previous_response_id: "not-a-response" },
      { model: "ask", input: "x", query: { content: "mine" } },
    ];
    for (const body of cases) {
      const result = await create(body);
      expect(result.status, JSON.stringify(body)).toBe(422);
      expect(result.body.detail[0]).toMatchObject({ loc: expect.any(Array), msg: expect.any(String), type: expect.any(String) });
      expect(result.body.error.type).toBe("invalid_request_error");
    }
    const anonymous = await fetch(`${stack.url}/v1/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(anonymous.status).toBe(401);
  });

  it("accepts OpenAI's other fields and unknown ones, and echoes what applies", async () => {
    const { status, body } = await create({
      model: "acme/ask",
      input: [
        { role: "developer", content: "Answer from the handbook" },
        { type: "function_call", call_id: "c1", name: "lookup", arguments: "{}" },
        { type: "function_call_output", call_id: "c1", output: "{}" },
        { type: "message", role: "user", content: [{ type: "input_text", text: "How much annual leave?" }, { type: "input_image", image_url: "https://x/y.png" }] },
      ],
      include: ["reasoning.encrypted_content"],
      tools: [],
      reasoning: { effort: "low", summary: "auto" },
      max_output_tokens: 500,
      temperature: 0.2,
      prompt_cache_key: "abc",
      unknown_field: { nested: true },
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({ model: "acme/ask", temperature: 0.2, max_output_tokens: 500, reasoning: { effort: "low", summary: "auto" } });
    expect(responsesErrors("Response", body)).toEqual([]);
    expect(openResponsesErrors("ResponseResource", body)).toEqual([]);
  });

  it("ends a FAILED query with 502, and its stream with response.failed", async () => {
    const plain = await create({ model: "ask", input: "leave [fault:failed]" });
    expect(plain.status).toBe(502);
    expect(plain.body.error.type).toBe("query_failed");
    const stream = await postStream(`${stack.url}/v1/responses`, headers(), { model: "ask", input: "leave [fault:failed]", stream: true });
    const last = stream.data.at(-1);
    expect(last).toMatchObject({ type: "response.failed", response: { status: "failed", error: { code: "server_error", message: expect.stringContaining("failed") } } });
    expect(responseEventErrors(last)).toEqual([]);
    expect(openResponsesEventErrors(last)).toEqual([]);
  });
});

describe("stored responses", () => {
  it("lists input items in OpenAI's list shape, newest first by default, paged with after and limit", async () => {
    const { body } = await create({
      model: "ask",
      input: [
        { role: "user", content: "first" },
        { role: "assistant", content: "an answer" },
        { role: "user", content: "How much annual leave?" },
      ],
    });
    const all = await get(`/v1/responses/${body.id}/input_items`);
    expect(all.status).toBe(200);
    expect(responsesErrors("ResponseItemList", all.body)).toEqual([]);
    expect(all.body.data.map((item: any) => item.role)).toEqual(["user", "assistant", "user"]);
    expect(all.body.data[0].content[0]).toEqual({ type: "input_text", text: "How much annual leave?" });
    const page = await get(`/v1/responses/${body.id}/input_items?order=asc&limit=1`);
    expect(page.body).toMatchObject({ has_more: true, first_id: page.body.data[0].id, last_id: page.body.data[0].id });
    const next = await get(`/v1/responses/${body.id}/input_items?order=asc&limit=5&after=${page.body.last_id}`);
    expect(next.body.data.map((item: any) => item.role)).toEqual(["assistant", "user"]);
    expect(next.body.has_more).toBe(false);
    expect((await get(`/v1/responses/${body.id}/input_items?limit=0`)).status).toBe(422);
  });

  it("replays a stored response's events, from a sequence number on", async () => {
    const { body } = await create({ model: "reason", input: "How much annual leave do I get?" });
    const replay = await fetch(`${stack.url}/v1/responses/${body.id}?stream=true`, { headers: headers() });
    const text = await replay.text();
    const events = text.split("\n\n").filter(Boolean).map((frame) => JSON.parse(frame.split("\ndata: ")[1] as string));
    expect(events[0].type).toBe("response.created");
    expect(events.at(-1)).toMatchObject({ type: "response.completed", response: body });
    for (const event of events) expect(responseEventErrors(event), event.type).toEqual([]);
    for (const event of events) expect(openResponsesEventErrors(event), event.type).toEqual([]);
    const later = await (await fetch(`${stack.url}/v1/responses/${body.id}?stream=true&starting_after=5`, { headers: headers() })).text();
    expect(later.split("\n\n").filter(Boolean).map((frame) => JSON.parse(frame.split("\ndata: ")[1] as string).sequence_number)[0]).toBe(6);
  });

  it("deletes a response, after which it is gone", async () => {
    const { body } = await create({ model: "ask", input: "leave" });
    const deleted = await get(`/v1/responses/${body.id}`, {}, "DELETE");
    expect(deleted).toEqual({ status: 200, body: { id: body.id, object: "response", deleted: true } });
    expect((await get(`/v1/responses/${body.id}`)).status).toBe(404);
    expect((await get(`/v1/responses/${body.id}`, {}, "DELETE")).status).toBe(404);
  });

  it("resolves item_reference to a stored output item, continuing its query; an unknown one is a 404", async () => {
    const first = await create({ model: "ask", input: "How much annual leave do I get?" });
    const message = first.body.output.at(-1);
    const second = await create({
      model: "ask",
      input: [{ role: "user", content: "How much annual leave do I get?" }, { type: "item_reference", id: message.id }, { role: "user", content: "Does it carry over?" }],
    });
    expect(second.status).toBe(200);
    expect(second.headers.get("service-query-id")).toBe(first.headers.get("service-query-id"));
    const items = await get(`/v1/responses/${second.body.id}/input_items?order=asc`);
    expect(items.body.data[1]).toMatchObject({ id: message.id, type: "message", role: "assistant" });
    const unknown = await create({ model: "ask", input: [{ type: "item_reference", id: "msg_unknown" }, { role: "user", content: "x" }] });
    expect(unknown.status).toBe(404);
  });
});

describe("the openai SDK on the Responses API", () => {
  const client = () =>
    new OpenAI({ baseURL: `${stack.url}/v1`, apiKey: API_KEY, defaultHeaders: { "Service-Workspace": "acme" }, maxRetries: 0 });

  it("creates, streams, retrieves, lists input items and deletes", async () => {
    const openai = client();
    const created = await openai.responses.create({ model: "ask", input: "How much annual leave do I get?" });
    expect(created.output_text).toContain("25 days");
    const streamed = await openai.responses.stream({ model: "reason", input: "How much annual leave do I get?" }).finalResponse();
    expect(streamed.status).toBe("completed");
    expect(streamed.output_text).toContain("25 days");
    const retrieved = await openai.responses.retrieve(streamed.id);
    expect(retrieved.output_text).toBe(streamed.output_text);
    // The caller's own, as a background response is: never for a cache between to keep.
    const raw = await fetch(`${stack.url}/v1/responses/${streamed.id}`, { headers: headers() });
    expect(raw.headers.get("cache-control")).toBe("no-store");
    await raw.text();
    const items = [];
    for await (const item of openai.responses.inputItems.list(created.id)) items.push(item);
    expect(items).toHaveLength(1);
    await openai.responses.delete(created.id);
    await expect(openai.responses.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
  });

  it("ends a FAILED query's stream with a failed response, and raises a 422 as an APIError with the interface's detail", async () => {
    const openai = client();
    await expect(openai.responses.create({ model: "gpt-4o", input: "x" })).rejects.toMatchObject({ status: 422, message: expect.stringContaining("body.model") });
    const failed = await openai.responses.stream({ model: "ask", input: "leave [fault:failed]" }).finalResponse();
    expect(failed.status).toBe("failed");
    expect(failed.error?.message).toContain("simulated failure");
  });
});
