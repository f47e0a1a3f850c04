import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import { RawHttpConnection, type RawResponse } from "../../helpers/raw-http.js";
import { parseSse } from "../../helpers/read-sse.js";
import { waitFor } from "../../helpers/wait-for.js";
import { chatBody, FIXTURE_DOCUMENTS, headers, type Stack, startAdapter, startStack } from "../../helpers/start-stack.js";

// Every streamed dialect read as bytes off a real socket, on whichever Node runs the suite: the
// chunked body is well-formed and ends with its terminator, the terminal frames are inside it,
// and the next bytes on the kept-alive connection are the next response. On Node 22 and later a
// stream ended while corked once wrote its last frames after the terminator (docs/architecture/edge.md#node-versions);
// clients' own parsers stop at the terminator and only show a cut answer.

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ QUERY_TIMEOUT_MS: "5000", SSE_KEEPALIVE_MS: "20" }, { stepDelayMs: 15 });
});
afterAll(() => stack.close());

/** The `data` of each event of an SSE body, JSON-parsed (`[DONE]` as the string). */
function eventsOf(response: RawResponse): { event?: string; data: any }[] {
  return parseSse(response.body).map(({ event, data }) => ({ event, data: data === "[DONE]" ? data : JSON.parse(data) }));
}

/**
 * Sends a streamed request on a fresh kept-alive connection and reads its response; then checks
 * that the connection carries the next response right after it (a `GET /health`).
 */
async function streamed(path: string, body: unknown, extraHeaders: Record<string, string> = {}): Promise<RawResponse> {
  const connection = await RawHttpConnection.open(stack.url);
  try {
    connection.send("POST", path, { ...headers(), ...extraHeaders }, JSON.stringify(body));
    const response = await connection.readResponse();
    connection.send("GET", "/health", {});
    const next = await connection.readResponse();
    expect(next.status).toBe(200);
    return response;
  } finally {
    connection.close();
  }
}

describe("streams end whole, in their framing, on this Node", () => {
  it("a chat completion: the finish chunk, the usage chunk and [DONE], inside the body", async () => {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const response = await streamed("/v1/chat/completions", chatBody("How many days of annual leave do employees get?", { stream: true, stream_options: { include_usage: true } }));
      expect(response.status).toBe(200);
      expect(response.headers["content-type"]).toMatch(/^text\/event-stream/);
      const events = eventsOf(response).map((event) => event.data);
      expect(events.at(-1)).toBe("[DONE]");
      const usage = events.at(-2);
      expect(usage.choices).toEqual([]);
      expect(usage.usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number), total_tokens: expect.any(Number) });
      expect(usage.usage.completion_tokens).toBeGreaterThan(0);
      const finished = events.filter((event) => event !== "[DONE]" && event.choices?.[0]?.finish_reason);
      expect(finished.map((event) => event.choices[0].finish_reason)).toEqual(["stop"]);
      const text = events.filter((event) => event !== "[DONE]").map((event) => event.choices?.[0]?.delta?.content ?? "").join("");
      expect(text).toMatch(/annual leave/i);
    }
  });

  it("a chat completion without usage, with two choices: each finish chunk, then [DONE]", async () => {
    const response = await streamed("/v1/chat/completions", chatBody("How are security incidents reported?", { stream: true, n: 2 }));
    const events = eventsOf(response).map((event) => event.data);
    expect(events.at(-1)).toBe("[DONE]");
    const finished = events.filter((event) => event !== "[DONE]" && event.choices?.[0]?.finish_reason).map((event) => event.choices[0].index);
    expect(finished.sort()).toEqual([0, 1]);
    expect(events.some((event) => event !== "[DONE]" && event.usage)).toBe(false);
  });

  it("a Responses stream: numbered events ending with response.completed", async () => {
    const response = await streamed("/v1/responses", { model: "ask", input: "How many days of annual leave do employees get?", stream: true });
    const events = eventsOf(response);
    expect(events.at(-1)?.event).toBe("response.completed");
    expect(events.at(-1)?.data.response.status).toBe("completed");
    expect(events.at(-1)?.data.response.usage.output_tokens).toBeGreaterThan(0);
    const numbers = events.map((event) => event.data.sequence_number);
    expect(numbers).toEqual(numbers.map((_, index) => numbers[0] + index));
  });

  it("an MCP tool call with progress: progress notifications, then the result", async () => {
    const call = { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "ask", arguments: { question: "How are security incidents reported?" }, _meta: { progressToken: "p-1" } } };
    const response = await streamed("/mcp", call, { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" });
    expect(response.status).toBe(200);
    expect(response.headers["content-type"]).toMatch(/^text\/event-stream/);
    const messages = eventsOf(response).map((event) => event.data);
    expect(messages.at(-1)).toMatchObject({ jsonrpc: "2.0", id: 7, result: { structuredContent: expect.any(Object) } });
    expect(messages.at(-1).result.isError ?? false).toBe(false);
    expect(messages.at(-1).result.structuredContent.answer).toContain("within one hour");
    expect(messages.slice(0, -1).every((message) => message.method === "notifications/progress")).toBe(true);
  });

  it("a failed answer: the error frame, then [DONE]", async () => {
    const response = await streamed("/v1/chat/completions", chatBody("leave [fault:failed]", { stream: true }));
    const events = eventsOf(response).map((event) => event.data);
    expect(events.at(-1)).toBe("[DONE]");
    expect(events.at(-2).error).toMatchObject({ type: "query_failed" });
  });

  it("a stream kept alive by comments until its deadline: the comments, the error frame and [DONE]", async () => {
    const slow = await startAdapter(stack.workspace.url, { QUERY_TIMEOUT_MS: "300", SSE_KEEPALIVE_MS: "20" });
    const connection = await RawHttpConnection.open(slow.url);
    try {
      connection.send("POST", "/v1/chat/completions", headers(), JSON.stringify(chatBody("leave [fault:stall]", { stream: true })));
      const response = await connection.readResponse();
      expect(response.body.toString()).toContain(": keep-alive\n\n");
      const events = eventsOf(response).map((event) => event.data);
      expect(events.at(-1)).toBe("[DONE]");
      expect(events.at(-2).error).toBeDefined();
      connection.send("GET", "/health", {});
      expect((await connection.readResponse()).status).toBe(200);
    } finally {
      connection.close();
      await slow.close();
    }
  });

  it("a stream ended by a shutdown: the error frame and [DONE] before the terminator, nothing after", async () => {
    const workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], stepDelayMs: 10 });
    const adapter = await startAdapter(workspace.url, { SHUTDOWN_GRACE_MS: "0", SSE_KEEPALIVE_MS: "20" });
    const connection = await RawHttpConnection.open(adapter.url);
    try {
      connection.send("POST", "/v1/chat/completions", headers(), JSON.stringify(chatBody("leave [fault:stall]", { stream: true })));
      // Shut down once the stream is open (its query created), however busy the machine.
      await waitFor(() => workspace.control.calls.create >= 1, "the stream's query to be created");
      const stopping = adapter.shutdown();
      const response = await connection.readResponse();
      const events = eventsOf(response).map((event) => event.data);
      expect(events.at(-1)).toBe("[DONE]");
      expect(events.at(-2).error).toMatchObject({ type: "service_unavailable" });
      expect((await connection.rest()).length).toBe(0);
      await stopping;
    } finally {
      connection.close();
      await adapter.close().catch(() => undefined);
      await workspace.close();
    }
  });
});
