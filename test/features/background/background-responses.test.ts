import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { responseEventErrors, responsesErrors } from "../../helpers/openai-schemas.js";
import { openResponsesErrors, openResponsesEventErrors } from "../../helpers/open-responses-schemas.js";
import { until } from "../../helpers/redis-topologies.js";
import { API_KEY, headers, type Stack, startStack } from "../../helpers/start-stack.js";

// Background mode of the Responses API (docs/responses-api.md#background-mode) on one adapter, its
// state in process: create, poll, cancel, resume a broken stream, and the bad input around them.

let stack: Stack;
let slow: Stack;
beforeAll(async () => {
  stack = await startStack({}, { stepDelayMs: 40 });
  // Slow enough that a cancel always lands while the query runs.
  slow = await startStack({}, { stepDelayMs: 5000 });
});
afterAll(async () => {
  await Promise.all([stack?.close(), slow?.close()]);
});

const sdk = (url: string, apiKey = API_KEY) => new OpenAI({ baseURL: `${url}/v1`, apiKey, defaultHeaders: { "service-workspace": "acme" }, maxRetries: 0 });

async function until200(client: OpenAI, id: string, done: (status: string) => boolean) {
  let last: any;
  await until(async () => {
    last = await client.responses.retrieve(id);
    return done(last.status);
  }, `response ${id} to end`);
  return last;
}

const raw = async (url: string, path: string, init: RequestInit = {}, key = API_KEY) => {
  const response = await fetch(`${url}${path}`, { ...init, headers: { ...headers(), authorization: `Bearer ${key}` } });
  return { status: response.status, body: (await response.json()) as any };
};

describe("background: true", () => {
  it("answers at once in progress, then any retrieve reports the completed response, also as a stored one", async () => {
    const client = sdk(stack.url);
    const created = await client.responses.create({ model: "reason", input: "How much annual leave do I get?", background: true });
    expect(created.status).toBe("in_progress");
    expect(created.background).toBe(true);
    expect(created.id).toMatch(/^resp_[0-9a-f]{32}$/);
    expect(created.output).toEqual([]);
    expect(responsesErrors("Response", created)).toEqual([]);
    expect(openResponsesErrors("ResponseResource", created)).toEqual([]);
    const done = await until200(client, created.id, (status) => status !== "in_progress");
    expect(done.status).toBe("completed");
    expect(responsesErrors("Response", done)).toEqual([]);
    expect(openResponsesErrors("ResponseResource", done)).toEqual([]);
    expect(done.output_text).toContain("25 days");
    expect(done.usage.output_tokens).toBeGreaterThan(0);
    // Stored: it continues like any stored response.
    const next = await client.responses.create({ model: "ask", input: "Does it carry over?", previous_response_id: created.id });
    expect(next.status).toBe("completed");
    expect(next.previous_response_id).toBe(created.id);
  });

  it("stops the upstream wait when cancelled; cancelling again answers the same; the workspace query is left to end", async () => {
    const client = sdk(slow.url);
    const created = await client.responses.create({ model: "build", input: "How much annual leave do I get?", background: true });
    expect(created.status).toBe("in_progress");
    await until(async () => slow.adapter.watcher.waitingQueries === 1, "the query to be followed");
    const cancelled = await client.responses.cancel(created.id);
    expect(cancelled.status).toBe("cancelled");
    expect(responsesErrors("Response", cancelled)).toEqual([]);
    expect(openResponsesErrors("ResponseResource", cancelled)).toEqual([]);
    await until(async () => slow.adapter.watcher.waitingQueries === 0, "the wait to stop");
    expect((await client.responses.retrieve(created.id)).status).toBe("cancelled");
    expect((await client.responses.cancel(created.id)).status).toBe("cancelled");
    // Its stream ends with the cancelled response.
    const events: any[] = [];
    for await (const event of await client.responses.retrieve(created.id, { stream: true })) events.push(event);
    expect(events.at(-1)).toMatchObject({ type: "response.incomplete", response: { status: "cancelled" } });
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
  });

  it("numbers a background stream; broken after a few events, resumed with starting_after, nothing repeated or lost", async () => {
    const client = sdk(stack.url);
    const stream = await client.responses.create({ model: "reason", input: "How much annual leave do I get?", background: true, stream: true });
    const first: any[] = [];
    for await (const event of stream) {
      first.push(event);
      if (first.length === 4) break;
    }
    const id = first[0].response.id;
    expect(first[0]).toMatchObject({ type: "response.created", response: { background: true } });
    const rest: any[] = [];
    const last = first.at(-1).sequence_number;
    for await (const event of await client.responses.retrieve(id, { stream: true, starting_after: last })) rest.push(event);
    const all = [...first, ...rest];
    expect(all.map((event) => event.sequence_number)).toEqual(all.map((_, index) => index));
    for (const event of all) expect(responseEventErrors(event), event.type).toEqual([]);
    for (const event of all) expect(openResponsesEventErrors(event), event.type).toEqual([]);
    expect(all.at(-1).type).toBe("response.completed");
    const text = all.filter((event) => event.type === "response.output_text.delta").map((event) => event.delta).join("");
    expect(all.at(-1).response.output.at(-1).content[0].text).toBe(text);
    // A replay from the start is the same events.
    const again: any[] = [];
    for await (const event of await client.responses.retrieve(id, { stream: true })) again.push(event);
    expect(again).toEqual(all);
  });
});

describe("background: bad input", () => {
  it("refuses background without store with OpenAI's 400", async () => {
    const { status, body } = await raw(stack.url, "/v1/responses", {
      method: "POST",
      body: JSON.stringify({ model: "ask", input: "Hi", background: true, store: false }),
    });
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ type: "invalid_request_error", param: "background" });
    expect(typeof body.detail).toBe("string");
  });

  it("answers 404 for an unknown id and for another key's or workspace's response, on retrieve, cancel and delete", async () => {
    const client = sdk(stack.url);
    const created = await client.responses.create({ model: "ask", input: "How much annual leave do I get?", background: true });
    for (const path of ["/v1/responses/resp_unknown", `/v1/responses/${created.id}`]) {
      const key = path.endsWith("unknown") ? API_KEY : "sk-other-key";
      for (const [method, suffix] of [["GET", ""], ["POST", "/cancel"], ["DELETE", ""]] as const) {
        const { status, body } = await raw(stack.url, `${path}${suffix}`, { method }, key);
        expect(status, `${method} ${path}${suffix}`).toBe(404);
        expect(body.error.type).toBe("not_found_error");
      }
    }
    const otherWorkspace = await fetch(`${stack.url}/v1/responses/${created.id}`, { headers: headers({ "service-workspace": "globex" }) });
    expect(otherWorkspace.status).toBe(404);
    await until200(client, created.id, (status) => status !== "in_progress");
  });

  it("refuses to cancel a finished response, or one not made in the background, with a 400", async () => {
    const client = sdk(stack.url);
    const created = await client.responses.create({ model: "ask", input: "How much annual leave do I get?", background: true });
    await until200(client, created.id, (status) => status === "completed");
    const finished = await raw(stack.url, `/v1/responses/${created.id}/cancel`, { method: "POST" });
    expect(finished.status).toBe(400);
    expect(finished.body.error).toMatchObject({ type: "invalid_request_error", param: "response_id" });
    expect(finished.body.error.message).toContain("completed");
    const plain = await client.responses.create({ model: "ask", input: "How much annual leave do I get?" });
    const notBackground = await raw(stack.url, `/v1/responses/${plain.id}/cancel`, { method: "POST" });
    expect(notBackground.status).toBe(400);
    expect(notBackground.body.error.message).toContain("background");
  });

  it("refuses starting_after beyond the end with a 400, and one that is not a number with a 422", async () => {
    const client = sdk(stack.url);
    const created = await client.responses.create({ model: "ask", input: "How much annual leave do I get?", background: true });
    await until200(client, created.id, (status) => status === "completed");
    const events: any[] = [];
    for await (const event of await client.responses.retrieve(created.id, { stream: true })) events.push(event);
    const beyond = await fetch(`${stack.url}/v1/responses/${created.id}?stream=true&starting_after=${events.length}`, { headers: headers() });
    expect(beyond.status).toBe(400);
    expect(((await beyond.json()) as any).error).toMatchObject({ type: "invalid_request_error", param: "starting_after" });
    const notNumber = await fetch(`${stack.url}/v1/responses/${created.id}?stream=true&starting_after=x`, { headers: headers() });
    expect(notNumber.status).toBe(422);
    // The last event's number is not beyond: the stream is empty and ends.
    const atEnd = await fetch(`${stack.url}/v1/responses/${created.id}?stream=true&starting_after=${events.length - 1}`, { headers: headers() });
    expect(atEnd.status).toBe(200);
    expect(await atEnd.text()).toBe("");
  });
});

describe("background: progress", () => {
  let paced: Stack;
  beforeAll(async () => {
    paced = await startStack({}, { stepDelayMs: 400 });
  });
  afterAll(() => paced?.close());

  it("reports what the answer has sent so far while it runs", async () => {
    const client = sdk(paced.url);
    const created = await client.responses.create({ model: "reason", input: "How much annual leave do I get?", background: true });
    let running: any;
    await until(async () => {
      running = await client.responses.retrieve(created.id);
      return running.status !== "in_progress" || running.output.length > 0;
    }, "the first output item");
    expect(running.status).toBe("in_progress");
    expect(running.output[0]).toMatchObject({ type: "reasoning" });
    expect(running.output[0].summary[0].text.length).toBeGreaterThan(0);
    expect(responsesErrors("Response", running)).toEqual([]);
    expect(openResponsesErrors("ResponseResource", running)).toEqual([]);
    const done = await until200(client, created.id, (status) => status !== "in_progress");
    expect(done.output[0].summary[0].text.startsWith(running.output[0].summary[0].text)).toBe(true);
  });
});
