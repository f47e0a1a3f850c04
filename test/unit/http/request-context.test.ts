import { execFileSync } from "node:child_process";
import { EventEmitter } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { type ClosedRequest, RequestContexts } from "../../../src/http/request-contexts.js";
import { requestLog, requestMetrics } from "../../../src/http/request-log.js";
import { Metrics } from "../../../src/metrics/metrics.js";

/** A response that closes when told to. */
class FakeResponse extends EventEmitter {
  statusCode = 200;
  headers: Record<string, unknown> = {};
  writableFinished = true;
  closed = false;
  setHeader(name: string, value: unknown) {
    this.headers[name] = value;
  }
  close() {
    this.closed = true;
    this.emit("close");
  }
}

const requestOf = (headers: Record<string, string> = {}) =>
  ({ method: "POST", url: "/v1/chat/completions?x=1", headers: { authorization: "Bearer sk-secret", ...headers } }) as unknown as IncomingMessage;

function opened(contexts: RequestContexts, headers?: Record<string, string>) {
  const response = new FakeResponse();
  const context = contexts.open(requestOf(headers), response as unknown as ServerResponse);
  return { response, context };
}

describe("RequestContexts", () => {
  it("gives each request an id (the client's when it is safe), echoed in the response", () => {
    const contexts = new RequestContexts([]);
    const { response, context } = opened(contexts, { "x-request-id": "client-id.1" });
    expect(context.id).toBe("client-id.1");
    expect(response.headers).toMatchObject({ "x-request-id": "client-id.1", "x-content-type-options": "nosniff" });
    const unsafe = opened(contexts, { "x-request-id": "bad id\n" });
    expect(unsafe.context.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("runs the close hooks, then each subscriber in order, once, with what the setters told", () => {
    const seen: string[] = [];
    const closed: ClosedRequest[] = [];
    const contexts = new RequestContexts([
      (request) => {
        seen.push("first");
        closed.push(request);
      },
      () => seen.push("second"),
    ]);
    const { response, context } = opened(contexts);
    context.whenClosed(() => seen.push("hook"));
    context.matched("/v1/chat/completions");
    context.answering({ workspace: "acme", mode: "ask", queryIds: ["q1"], continued: false });
    response.close();
    response.emit("close");
    expect(seen).toEqual(["hook", "first", "second"]);
    expect(closed[0]?.context.facts).toEqual({
      route: "/v1/chat/completions",
      workspace: "acme",
      mode: "ask",
      queryIds: ["q1"],
      continued: false,
      tool: undefined,
      chatUiTask: undefined,
    });
    expect(closed[0]?.seconds).toBeGreaterThanOrEqual(0);
  });

  it("makes a context with no response for a request that has none (a message on a socket), ended by its owner", () => {
    const seen: boolean[] = [];
    const context = new RequestContexts([]).detached();
    const controller = context.abortWhenLeft();
    context.whenClosed((completed) => seen.push(completed));
    context.whenFinishing(() => seen.push(false));
    expect(context.closed).toBe(false);
    context.close(true);
    context.close(false);
    expect(seen).toEqual([true]);
    expect(controller.signal.aborted).toBe(false);
  });

  it("has no answer span when tracing is off", () => {
    const contexts = new RequestContexts([]);
    const { context } = opened(contexts);
    context.traceAnswer({ operation: "chat", model: "ask", stream: false, mode: "ask", workspace: "acme", principal: "p" });
    expect(context.span).toBeUndefined();
    expect(context.answer).toBeUndefined();
  });
});

describe("what a closed request leaves behind", () => {
  it("nothing of it outlives the young generation: its context does not keep its response alive", () => {
    // In a process of its own, on the compiled code (the suite's setup compiles it): in the suite's
    // long-lived workers, other tests' objects and V8's decisions about them change what is promoted.
    const script = fileURLToPath(new URL("../../fixtures/gc/closed-requests.mjs", import.meta.url));
    const output = execFileSync(process.execPath, ["--expose-gc", script], { encoding: "utf8" });
    const { promotedPerResponse } = JSON.parse(output) as { promotedPerResponse: number };
    // Had each response's 4 KB been kept until a major collection, it would be about 5,400 bytes a response.
    expect(promotedPerResponse).toBeLessThan(512);
  });
});

describe("the request's subscribers", () => {
  it("write one log line of what the request learnt, never its headers, and count it by route, mode and status", async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    const metrics = new Metrics({ openStreams: () => 0, waitingQueries: () => 0, pollers: () => 0 }, { processMetrics: false });
    const contexts = new RequestContexts([requestMetrics(metrics), requestLog(pino(sink))]);
    const { response, context } = opened(contexts, { "x-request-id": "r1" });
    context.matched("/mcp");
    context.inWorkspace("acme");
    context.callingTool("search");
    response.statusCode = 201;
    response.close();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ msg: "request", requestId: "r1", method: "POST", path: "/v1/chat/completions", status: 201, workspace: "acme", tool: "search", completed: true });
    expect(JSON.stringify(lines[0])).not.toContain("sk-secret");
    const counted = await metrics.registry.getSingleMetric("adapter_http_requests_total")?.get();
    expect(counted?.values).toEqual([{ value: 1, labels: { route: "/mcp", mode: "", status: "201" } }]);
  });

  it("tell a chat UI's housekeeping answered by the adapter", () => {
    const contexts = new RequestContexts([]);
    const { context } = opened(contexts);
    context.answeredLocally({ workspace: "acme", mode: "ask", chatUiTask: "open-webui/title" });
    expect(context.facts).toMatchObject({ workspace: "acme", mode: "ask", chatUiTask: "open-webui/title", queryIds: undefined });
  });
});
