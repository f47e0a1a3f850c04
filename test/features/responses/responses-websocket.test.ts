import { mkdtempSync, readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { readUsage } from "../../helpers/governance.js";
import { openResponsesErrors, openResponsesEventErrors } from "../../helpers/open-responses-schemas.js";
import { responseEventErrors, responsesErrors } from "../../helpers/openai-schemas.js";
import { postStream } from "../../helpers/read-sse.js";
import { ResponseSocket, responseOf, type SocketEvent } from "../../helpers/response-socket.js";
import { API_KEY, headers, type Stack, startStack } from "../../helpers/start-stack.js";
import { waitFor } from "../../helpers/wait-for.js";
import { systemClock } from "../../../src/util/clock.js";

// WebSocket mode of the Responses API (docs/responses-api.md#websocket-mode), over real loopback
// sockets with the `ws` client: the same events as the SSE stream, one answer at a time per socket,
// continuations (a store: false response on its socket only), error events for bad input, the
// upgrade's authentication, a client leaving mid-answer, and shutdown.

const QUESTION = "How much annual leave do I get?";
const ADMIN_KEY = "sk-admin-websocket";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ ADMIN_API_KEYS: `ops=${ADMIN_KEY}`, RATE_LIMIT_CONCURRENT: "1" });
});
afterAll(() => stack.close());

/** The create bodies the workspace received from here on. */
function upstream() {
  const before = stack.workspace.control.creates.length;
  return () => stack.workspace.control.creates.slice(before).map((entry) => entry.body as { id: string; content: string });
}

/** What a stream's events say, without what varies from one run to the next (ids, times, how the text was cut into deltas). */
function shape(events: readonly SocketEvent[]): string[] {
  return events.map((event) => event.type).filter((type, index, types) => !type.endsWith(".delta") || types[index - 1] !== type);
}

function textOf(response: any): string {
  return response.output.filter((item: any) => item.type === "message").flatMap((item: any) => item.content.map((part: any) => part.text)).join("");
}

describe("a response over a WebSocket", () => {
  it("is the SSE stream's events, one JSON text message each, numbered alike, valid by the spec's and OpenAI's schemas", async () => {
    const socket = await ResponseSocket.open(stack.url);
    const events = await socket.turn({ model: "ask", input: QUESTION });
    socket.close();
    const sse = await postStream(`${stack.url}/v1/responses`, headers(), { model: "ask", input: QUESTION, stream: true });
    const streamed = sse.data as SocketEvent[];
    expect(shape(events)).toEqual(shape(streamed));
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    for (const event of events) {
      expect(openResponsesEventErrors(event), event.type).toEqual([]);
      expect(responseEventErrors(event), event.type).toEqual([]);
    }
    const response = responseOf(events);
    expect(response.status).toBe("completed");
    expect(textOf(response)).toBe(textOf(responseOf(streamed)));
    expect(response.output.at(-1).content[0].annotations[0]).toMatchObject({ type: "url_citation" });
    expect(response.usage.input_tokens).toBeGreaterThan(0);
    expect(openResponsesErrors("ResponseResource", response)).toEqual([]);
    expect(responsesErrors("Response", response)).toEqual([]);
  });

  it("answers messages sent at once in order, one at a time, never interleaved", async () => {
    const socket = await ResponseSocket.open(stack.url);
    socket.create({ model: "ask", input: QUESTION, store: false });
    socket.create({ model: "ask", input: "How are security incidents reported?", store: false });
    const first = await socket.untilTerminal();
    const second = await socket.untilTerminal();
    socket.close();
    for (const turn of [first, second]) {
      expect(turn[0]?.type).toBe("response.created");
      expect(turn.at(-1)?.type).toBe("response.completed");
      expect(turn.map((event) => event.sequence_number)).toEqual(turn.map((_, index) => index));
      expect(new Set(turn.flatMap((event) => (event.response?.id ? [event.response.id] : [])))).toHaveProperty("size", 1);
    }
    expect(responseOf(first).id).not.toBe(responseOf(second).id);
  });

  it("continues a store: false response on its own socket, the same workspace query; after a reconnect it is previous_response_not_found", async () => {
    const creates = upstream();
    const socket = await ResponseSocket.open(stack.url);
    const first = responseOf(await socket.turn({ model: "ask", input: QUESTION, store: false }));
    const second = responseOf(await socket.turn({ model: "ask", input: "Does it carry over?", store: false, previous_response_id: first.id }));
    socket.close();
    expect(second.status).toBe("completed");
    expect(second.previous_response_id).toBe(first.id);
    const [asked, continued] = creates();
    expect(continued?.id).toBe(asked?.id);
    // Nothing of it was stored: over HTTP and on a new socket alike it is not found.
    const retrieved = await fetch(`${stack.url}/v1/responses/${first.id}`, { headers: headers() });
    expect(retrieved.status).toBe(404);
    const again = await ResponseSocket.open(stack.url);
    const [missing] = await again.turn({ model: "ask", input: "Does it carry over?", store: false, previous_response_id: first.id });
    expect(missing).toMatchObject({ type: "error", status: 404, error: { code: "previous_response_not_found", param: "previous_response_id" } });
    expect(openResponsesErrors("WebSocketErrorEvent", missing)).toEqual([]);
    // The socket stays usable: a new chain starts.
    expect(responseOf(await again.turn({ model: "ask", input: QUESTION, store: false })).status).toBe("completed");
    again.close();
  });

  it("forgets a store: false response whose continuation failed: continuing it again is previous_response_not_found", async () => {
    const socket = await ResponseSocket.open(stack.url);
    const first = responseOf(await socket.turn({ model: "ask", input: QUESTION, store: false }));
    const toolResult = [{ type: "function_call_output", call_id: "call_nobody_made", output: "x" }];
    const [failed] = await socket.turn({ model: "ask", store: false, previous_response_id: first.id, input: toolResult });
    expect(failed).toMatchObject({ type: "error", status: 400, error: { code: "invalid_value", param: "input" } });
    const [evicted] = await socket.turn({ model: "ask", store: false, previous_response_id: first.id, input: "Does it carry over?" });
    expect(evicted).toMatchObject({ type: "error", error: { code: "previous_response_not_found" } });
    socket.close();
  });

  it("continues a stored response made over HTTP, and over HTTP one made on a socket", async () => {
    const creates = upstream();
    const overHttp: any = await (await fetch(`${stack.url}/v1/responses`, { method: "POST", headers: headers(), body: JSON.stringify({ model: "ask", input: QUESTION }) })).json();
    const socket = await ResponseSocket.open(stack.url);
    const onSocket = responseOf(await socket.turn({ model: "ask", input: "Does it carry over?", previous_response_id: overHttp.id }));
    socket.close();
    const body = JSON.stringify({ model: "ask", input: "And for part-time staff?", previous_response_id: onSocket.id });
    const after: any = await (await fetch(`${stack.url}/v1/responses`, { method: "POST", headers: headers(), body })).json();
    expect(after.status).toBe("completed");
    const ids = creates().map((create) => create.id);
    expect(new Set(ids).size).toBe(1);
    expect(ids).toHaveLength(3);
  });
});

describe("bad input on a WebSocket", () => {
  it("is an error event in the spec's shape, the socket staying usable: not JSON, binary, not an event, an unknown type, an invalid body, background", async () => {
    const socket = await ResponseSocket.open(stack.url);
    const sent: [unknown, Record<string, unknown>][] = [
      ["{not json", { status: 400, error: { type: "invalid_request_error", code: "invalid_json" } }],
      [Buffer.from(JSON.stringify({ type: "response.create", model: "ask", input: "hi" })), { status: 400, error: { code: "invalid_message" } }],
      ["[1,2]", { status: 400, error: { code: "invalid_message", param: "type" } }],
      [JSON.stringify({ type: "response.cancel" }), { status: 400, error: { code: "unknown_event_type", param: "type" } }],
      [JSON.stringify({ type: "response.create", model: "ask" }), { status: 422, error: { param: "input" }, detail: [{ loc: ["body", "input"] }] }],
      [JSON.stringify({ type: "response.create", model: "ask", input: "hi", background: true }), { status: 400, error: { param: "background", code: "unsupported_parameter" } }],
    ];
    for (const [message, expected] of sent) {
      socket.socket.send(message as string, { binary: Buffer.isBuffer(message) });
      const [event] = await socket.untilTerminal();
      expect(event).toMatchObject({ type: "error", ...expected });
      expect(openResponsesErrors("WebSocketErrorEvent", event)).toEqual([]);
      expect(JSON.stringify(event)).not.toMatch(/\bat .*\.js:\d+|sk-test/);
    }
    // `stream` and `stream_options` are the transport's to decide: ignored, as the Agents SDK sends them.
    const events = await socket.turn({ model: "ask", input: QUESTION, stream: true, stream_options: { include_obfuscation: false } });
    expect(events.at(-1)?.type).toBe("response.completed");
    socket.close();
  });

  it("refuses what the workspace cannot do even under LENIENT_PARAMETERS=on: no header could name what was ignored", async () => {
    const lenient = await startStack({ LENIENT_PARAMETERS: "on" });
    try {
      const socket = await ResponseSocket.open(lenient.url);
      const [refused] = await socket.turn({ model: "ask", input: QUESTION, tool_choice: "required", tools: [{ type: "web_search" }] });
      expect(refused).toMatchObject({ type: "error", status: 400, error: { code: "unsupported_value" } });
      socket.close();
    } finally {
      await lenient.close();
    }
  });

  it("closes a socket sent a message larger than a request body may be (1009), without an answer", async () => {
    const small = await startStack({ BODY_LIMIT_BYTES: "4096" });
    try {
      const creates = small.workspace.control.creates.length;
      const socket = await ResponseSocket.open(small.url);
      socket.create({ model: "ask", input: "x".repeat(5000) });
      expect(await socket.whenClosed()).toMatchObject({ code: 1009 });
      expect(small.workspace.control.creates.length).toBe(creates);
    } finally {
      await small.close();
    }
  });
});

describe("the upgrade", () => {
  it("is refused before it happens as the POST route refuses: 401 with `detail` and an OpenAI error, 403 for a foreign browser origin", async () => {
    const listed = await startStack({ ADAPTER_API_KEYS: "team=sk-team-key", WORKSPACE_API_KEY: API_KEY });
    try {
      const refused = await ResponseSocket.open(listed.url, { authorization: "Bearer sk-wrong-key" }).catch((error: unknown) => error);
      expect(refused).toMatchObject({ status: 401, body: { detail: expect.any(String), error: { type: "authentication_error" } } });
      const foreign = await ResponseSocket.open(listed.url, { authorization: "Bearer sk-team-key", origin: "https://evil.example" }).catch((error: unknown) => error);
      expect(foreign).toMatchObject({ status: 403 });
      const socket = await ResponseSocket.open(listed.url, { authorization: "Bearer sk-team-key" });
      expect(responseOf(await socket.turn({ model: "ask", input: QUESTION })).status).toBe("completed");
      socket.close();
    } finally {
      await listed.close();
    }
  });

  it("is a 429 too_many_connections past WEBSOCKET_MAX_PER_KEY open sockets of one key, counted per key and given back as one closes", async () => {
    const listed = await startStack({ ADAPTER_API_KEYS: "team=sk-team-key,other=sk-other-key", WORKSPACE_API_KEY: API_KEY, WEBSOCKET_MAX_PER_KEY: "2" });
    try {
      const team = { authorization: "Bearer sk-team-key" };
      // Asked together: the bound holds for upgrades in flight at once, not only for sockets already open.
      const attempts = await Promise.allSettled([1, 2, 3].map(() => ResponseSocket.open(listed.url, team)));
      const opened = attempts.flatMap((attempt) => (attempt.status === "fulfilled" ? [attempt.value] : []));
      const refusals = attempts.flatMap((attempt) => (attempt.status === "rejected" ? [attempt.reason] : []));
      expect(opened).toHaveLength(2);
      expect(refusals).toEqual([expect.objectContaining({ status: 429, body: { detail: expect.stringContaining("WEBSOCKET_MAX_PER_KEY"), error: expect.objectContaining({ type: "rate_limit_error", code: "too_many_connections" }) } })]);
      // Another key's sockets are its own; the team's open ones still answer.
      const other = await ResponseSocket.open(listed.url, { authorization: "Bearer sk-other-key" });
      expect(responseOf(await opened[0]!.turn({ model: "ask", input: QUESTION })).status).toBe("completed");
      other.close();
      opened[1]!.close();
      await opened[1]!.whenClosed();
      const again = await waitFor(() => ResponseSocket.open(listed.url, team).catch(() => null), "a team socket once one closed");
      again.close();
      opened[0]!.close();
    } finally {
      await listed.close();
    }
  });

  it("is not asked by a plain GET, which is still the 405 it was", async () => {
    const response = await fetch(`${stack.url}/v1/responses`, { headers: headers() });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("POST");
    expect(await response.json()).toMatchObject({ error: { code: "method_not_allowed" } });
  });

  it("with a handshake that is no WebSocket's, is a 400, and the connection closes", async () => {
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const request = httpRequest(`${stack.url}/v1/responses`, {
        headers: { connection: "Upgrade", upgrade: "websocket", authorization: `Bearer ${API_KEY}`, "sec-websocket-version": "13", "sec-websocket-key": "short" },
      });
      request.on("response", (response) => {
        response.resume();
        response.on("end", () => resolve(response.statusCode));
      });
      request.on("upgrade", () => reject(new Error("upgraded")));
      request.on("error", reject);
      request.end();
    });
    expect(status).toBe(400);
  });
});

describe("limits and the audit trail", () => {
  it("apply per response as over HTTP: the key's rate limit refuses the third with a 429 event, and each answer has its audit record", async () => {
    const auditFile = join(mkdtempSync(join(tmpdir(), "websocket-audit-")), "audit.jsonl");
    const own = await startStack({ RATE_LIMIT_RPM: "2", AUDIT_LOG: auditFile });
    try {
      const socket = await ResponseSocket.open(own.url);
      for (let turn = 0; turn < 2; turn += 1) expect(responseOf(await socket.turn({ model: "ask", input: QUESTION })).status).toBe("completed");
      const [refused] = await socket.turn({ model: "ask", input: QUESTION });
      expect(refused).toMatchObject({ type: "error", status: 429, error: { type: "rate_limit_error", code: "rate_limit_exceeded" } });
      socket.close();
      const records = await waitFor(() => {
        const lines = readFileSync(auditFile, "utf8").split("\n").filter(Boolean);
        return lines.length >= 2 ? lines.map((line) => JSON.parse(line) as Record<string, any>) : undefined;
      }, "an audit record per answer");
      expect(records).toHaveLength(2);
      for (const record of records) expect(record).toMatchObject({ dialect: "responses", workspace: "acme", status: 200, completed: true });
      expect(readFileSync(auditFile, "utf8")).not.toContain(API_KEY);
    } finally {
      await own.close();
    }
  });
});

describe("a client that leaves mid-answer", () => {
  it("stops its answer as an HTTP client's leaving does: the polling stops, its place under the limits is given back, and it is charged", async () => {
    const socket = await ResponseSocket.open(stack.url);
    socket.create({ model: "ask", input: "leave [fault:stall]" });
    expect((await socket.next())?.type).toBe("response.created");
    await waitFor(() => stack.adapter.watcher.activePollers === 1, "the query's poller");
    const start = Math.floor(Date.now() / 1000) - 120;
    const requestsBefore = await requestsCharged(start);
    socket.socket.terminate();
    await waitFor(() => stack.adapter.watcher.activePollers === 0, "the poller to stop");
    await waitFor(async () => (await requestsCharged(start)) === requestsBefore + 1, "the abandoned answer to be charged");
    // RATE_LIMIT_CONCURRENT=1: the place it held is free again.
    const next = await ResponseSocket.open(stack.url);
    expect(responseOf(await next.turn({ model: "ask", input: QUESTION })).status).toBe("completed");
    next.close();
  });
});

/** The answers charged to the test key since `start`, as the usage endpoint counts them. */
async function requestsCharged(start: number): Promise<number> {
  const page = await readUsage(stack.url, ADMIN_KEY, `start_time=${start}`);
  return page.body.data.flatMap((bucket: { results: any[] }) => bucket.results).reduce((sum: number, result: any) => sum + result.num_model_requests, 0);
}

describe("shutdown", () => {
  it("closes an idle socket at once and a busy one once its answer ended, both with 1001", async () => {
    const own = await startStack({}, { stepDelayMs: 40 });
    try {
      const idle = await ResponseSocket.open(own.url);
      const busy = await ResponseSocket.open(own.url);
      busy.create({ model: "ask", input: QUESTION });
      expect((await busy.next())?.type).toBe("response.created");
      const stopping = own.shutdown();
      expect(await idle.whenClosed()).toMatchObject({ code: 1001 });
      const rest = await busy.untilTerminal();
      expect(rest.at(-1)?.type).toBe("response.completed");
      expect(await busy.whenClosed()).toMatchObject({ code: 1001 });
      await stopping;
      await expect(ResponseSocket.open(own.url)).rejects.toBeDefined();
    } finally {
      await own.close();
    }
  });
});

describe("a connection's life", () => {
  it("ends at WEBSOCKET_MAX_MINUTES with websocket_connection_limit_reached, once the answer in flight has ended", async () => {
    // The adapter's clock, moved on by hand past the connection's hour.
    let skipped = 0;
    const clock = { ...systemClock, now: () => Date.now() + skipped };
    const own = await startStack({ WEBSOCKET_PING_MS: "1000" }, { stepDelayMs: 40 }, { clock });
    try {
      const socket = await ResponseSocket.open(own.url);
      socket.create({ model: "ask", input: QUESTION });
      expect((await socket.next())?.type).toBe("response.created");
      skipped = 61 * 60_000;
      const rest = await socket.untilTerminal();
      expect(rest.at(-1)?.type).toBe("response.completed");
      const [limit] = await socket.untilTerminal();
      expect(limit).toMatchObject({ type: "error", error: { code: "websocket_connection_limit_reached" } });
      expect(openResponsesErrors("WebSocketErrorEvent", limit)).toEqual([]);
      expect(await socket.whenClosed()).toMatchObject({ code: 1000 });
    } finally {
      await own.close();
    }
  });
});

describe("a socket and the HTTP server's bounds", () => {
  it("outlives SERVER_REQUEST_TIMEOUT_MS, which bounds receiving a request, not a connection; closing the adapter at once closes it", async () => {
    const own = await startStack({ SERVER_REQUEST_TIMEOUT_MS: "300", SERVER_HEADERS_TIMEOUT_MS: "200", WEBSOCKET_PING_MS: "1000" });
    let closing: Promise<void> | undefined;
    try {
      const socket = await ResponseSocket.open(own.url);
      let pings = 0;
      socket.socket.on("ping", () => (pings += 1));
      // Two pings: over a second, several times the request timeout and the server's checks of it.
      await waitFor(() => pings >= 2, "two pings");
      expect(responseOf(await socket.turn({ model: "ask", input: QUESTION })).status).toBe("completed");
      closing = own.close();
      expect(await socket.whenClosed()).toMatchObject({ code: 1006 });
      await closing;
    } finally {
      if (!closing) await own.close();
    }
  });
});

describe("idle sockets", () => {
  it("are pinged, and one that stops answering is cut", async () => {
    const own = await startStack({ WEBSOCKET_PING_MS: "1000" });
    try {
      const socket = await ResponseSocket.open(own.url);
      let pings = 0;
      socket.socket.on("ping", () => (pings += 1));
      await waitFor(() => pings >= 1, "a ping");
      // A client that no longer answers pings (`autoPong` off stands for one gone without a close).
      const silent = new WebSocket(`${own.url.replace(/^http/, "ws")}/v1/responses`, { headers: { authorization: `Bearer ${API_KEY}` }, autoPong: false });
      const closed = new Promise<number>((resolve) => silent.once("close", (code) => resolve(code)));
      expect(await closed).toBe(1006);
      expect(socket.closed).toBeUndefined();
      socket.close();
    } finally {
      await own.close();
    }
  }, 30_000);
});
