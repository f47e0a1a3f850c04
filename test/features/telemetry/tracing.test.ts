import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { credentialHash } from "../../../src/auth/credential-hash.js";
import type { ThreadStore } from "../../../src/continuity/threads/thread-store.js";
import type { ReceivedSpan } from "../../helpers/otlp-receiver.js";
import { API_KEY, chatBody, headers } from "../../helpers/start-stack.js";
import { startTracedProcess, type TracedProcess } from "../../helpers/traced-process.js";
import { childrenOf, expectAnswerSpan, spanNamed, startTracedStack, type TracedStack } from "../../helpers/traced-stack.js";

// docs/observability.md: what a traced answer exports, read back by a loopback OTLP/HTTP receiver.
// The adapter runs in this process where only the export pipeline's variables matter, and as its
// own process (the entry point) where the SDK reads the rest from the environment.

/** A traced adapter, in this process or its own. */
type Traced = Pick<TracedStack, "url" | "flush">;

const CALLER_TRACE = "0af7651916cd43dd8448eb211c80319c";
const CALLER_SPAN = "b7ad6b7169203331";

/** A conversation store whose every call fails: the conversation warnings are log lines written while a request is served. */
const failingStore: ThreadStore = {
  get: () => Promise.reject(new Error("store down")),
  set: () => Promise.reject(new Error("store down")),
  close: () => Promise.resolve(),
};

async function chat(stack: Traced, content: string, extra: Record<string, unknown> = {}, extraHeaders: Record<string, string> = {}) {
  const response = await fetch(`${stack.url}/v1/chat/completions`, {
    method: "POST",
    headers: headers(extraHeaders),
    body: JSON.stringify(chatBody(content, extra)),
  });
  return { response, text: await response.text() };
}

/** Waits until the request's server span and everything under it have ended and been exported. */
async function traceOf(stack: Traced, traceId: string, route = "POST /v1/chat/completions"): Promise<ReceivedSpan[]> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const spans = await stack.flush();
    if (spans.some((span) => span.traceId === traceId && span.name === route)) return spans;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`no ${route} span in trace ${traceId}`);
}

/** The values of every attribute, event attribute and link attribute of the spans, as one text (for absence checks). */
function everything(spans: readonly ReceivedSpan[]): string {
  const described = spans.map((span) => [span.name, span.attributes, span.events.map((event) => [event.name, event.attributes]), span.links, span.resource, span.status]);
  return JSON.stringify(described);
}

describe("tracing over OTLP/HTTP protobuf (the default protocol)", () => {
  let stack: TracedStack;
  beforeAll(async () => {
    stack = await startTracedStack({}, {}, { workspace: { stepDelayMs: 80 }, effects: { stores: { threads: failingStore } } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("traces a streamed answer: the server span continues the caller's traceparent; the answer span, its upstream calls and events hang under it", async () => {
    const { response, text } = await chat(stack, "How many vacation days do employees get?", { stream: true }, { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` });
    expect(response.status).toBe(200);
    expect(text).toContain("[DONE]");
    const queryId = response.headers.get("service-query-id") as string;
    const spans = (await traceOf(stack, CALLER_TRACE)).filter((span) => span.traceId === CALLER_TRACE);
    expect(stack.receiver.exports[0]?.contentType).toBe("application/x-protobuf");

    const server = spanNamed(spans, "POST /v1/chat/completions");
    expect(server).toMatchObject({ kind: "server", parentSpanId: CALLER_SPAN, scope: "workspace-openai-adapter" });
    expect(server.attributes).toMatchObject({
      "http.request.method": "POST",
      "http.route": "/v1/chat/completions",
      "url.path": "/v1/chat/completions",
      "http.response.status_code": 200,
      "workspace_adapter.request_id": response.headers.get("x-request-id"),
    });
    expect(server.resource).toMatchObject({ "service.name": "workspace-openai-adapter", "service.version": "test" });

    const answer = spanNamed(spans, "chat ask");
    expect(answer).toMatchObject({ kind: "internal", parentSpanId: server.spanId });
    expect(answer.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "workspace",
      "gen_ai.request.model": "ask",
      "gen_ai.response.model": "ask",
      "gen_ai.response.id": `chatcmpl-${queryId}`,
      "gen_ai.response.finish_reasons": ["stop"],
      "gen_ai.conversation.id": queryId,
      "gen_ai.request.stream": true,
      "gen_ai.request.choice.count": 1,
      "workspace_adapter.workspace": "acme",
      "workspace_adapter.mode": "ask",
      "workspace_adapter.credential.hash_prefix": credentialHash(API_KEY).slice(0, 8),
      // Who asked: a key without a name, by its hash prefix (docs/governance.md#who-asks).
      "workspace_adapter.client.key": `key:${credentialHash(API_KEY).slice(0, 12)}`,
      "workspace_adapter.query.ids": [queryId],
      "workspace_adapter.completed": true,
    });
    // The client did not ask for usage (no stream_options): the span has it all the same.
    expect(answer.attributes["gen_ai.usage.input_tokens"]).toBeGreaterThan(0);
    expect(answer.attributes["gen_ai.usage.output_tokens"]).toBeGreaterThan(0);
    // Within the server span (the SDK anchors each span's clock to Date.now(): up to a millisecond apart).
    expect(answer.start).toBeGreaterThanOrEqual(server.start - 1_000_000n);
    expect(answer.end).toBeLessThanOrEqual(server.end + 1_000_000n);

    // Events in the order they happen: the first step and the first published word come before the end.
    const events = Object.fromEntries(answer.events.map((event) => [event.name, event]));
    for (const name of ["workspace_adapter.first_step", "workspace_adapter.first_text", "workspace_adapter.realtime.first_publication", "workspace_adapter.query.terminal"]) {
      expect(events[name], name).toBeDefined();
    }
    expect(events["workspace_adapter.query.terminal"]?.attributes).toEqual({ "workspace_adapter.choice": 0, "workspace_adapter.query.status": "PROCESSED" });
    expect(events["workspace_adapter.first_text"]!.time).toBeLessThan(events["workspace_adapter.query.terminal"]!.time);

    const children = childrenOf(spans, answer);
    const create = spanNamed(children, "POST /queries");
    expect(create.kind).toBe("client");
    expect(create.attributes).toMatchObject({ "http.request.method": "POST", "http.response.status_code": 200, "server.address": "127.0.0.1" });
    const realtime = spanNamed(children, "realtime subscription");
    expect(realtime.kind).toBe("client");
    expect(realtime.attributes["workspace_adapter.realtime.end"]).toBe("closed");
    expect(realtime.attributes["workspace_adapter.realtime.publications"]).toBeGreaterThan(0);

    // The workspace service received the create call's own span as its parent.
    const created = stack.upstream.requests.find((request) => request.method === "POST" && request.headers.traceparent?.includes(CALLER_TRACE));
    expect(created?.headers.traceparent).toBe(`00-${CALLER_TRACE}-${create.spanId}-01`);
  });

  it("traces each poll as a short trace of its own, linked to the answers it serves, with its list calls (and their traceparent) under it", async () => {
    const { response } = await chat(stack, "What is the travel policy?", {}, { traceparent: `00-${"1".repeat(32)}-${CALLER_SPAN}-01` });
    expect(response.status).toBe(200);
    const spans = await traceOf(stack, "1".repeat(32));
    const answer = spans.find((span) => span.traceId === "1".repeat(32) && span.name === "chat ask") as ReceivedSpan;
    const polls = spans.filter((span) => span.name === "poll queries" && span.links.some((link) => link.spanId === answer.spanId));
    expect(polls.length).toBeGreaterThan(0);
    for (const poll of polls) {
      expect(poll.parentSpanId).toBe("");
      expect(poll.traceId).not.toBe(answer.traceId);
      expect(poll.links[0]?.traceId).toBe(answer.traceId);
      expect(poll.attributes).toMatchObject({ "workspace_adapter.workspace": "acme", "workspace_adapter.poll.pages": 1 });
      const list = spanNamed(childrenOf(spans, poll), "GET /queries");
      expect(list.attributes).toMatchObject({ "http.request.method": "GET", "http.response.status_code": 200 });
      const received = stack.upstream.requests.find((request) => request.headers.traceparent === `00-${poll.traceId}-${list.spanId}-01`);
      expect(received?.url).toBe("/queries?limit=100");
    }
    // The answer's own trace holds no list call: polls are not one request's work.
    expect(spans.filter((span) => span.traceId === answer.traceId && span.name === "GET /queries")).toEqual([]);
  });

  it("writes no message content and no credential on any span unless the operator opts in", async () => {
    const prompt = "Who approves expense reports above the limit?";
    const { response, text } = await chat(stack, prompt, {}, { traceparent: `00-${"2".repeat(32)}-${CALLER_SPAN}-01` });
    expect(response.status).toBe(200);
    const content = (JSON.parse(text) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
    const spans = (await traceOf(stack, "2".repeat(32))).filter((span) => span.traceId === "2".repeat(32));
    const all = everything(spans);
    expect(all).not.toContain(prompt);
    expect(all).not.toContain(content.slice(0, 40));
    expect(all).not.toContain(API_KEY);
    expect(all).not.toContain("gen_ai.input.messages");
    expect(everything(stack.receiver.spans())).not.toContain(API_KEY);
  });

  it("puts the trace and span ids on every log line written while serving a request", async () => {
    // A later turn of a conversation: the (failing) conversation store is read before the answer, and the
    // request is refused (docs/architecture/redis.md#redis-down-or-slow) with a warning written in the middle of it.
    const messages = [
      { role: "user", content: "What is the travel policy?" },
      { role: "assistant", content: "Book through the portal." },
      { role: "user", content: "How are expenses approved?" },
    ];
    const { response } = await chat(stack, "", { messages }, { traceparent: `00-${"3".repeat(32)}-${CALLER_SPAN}-01` });
    expect(response.status).toBe(503);
    const spans = await traceOf(stack, "3".repeat(32));
    const server = spans.find((span) => span.traceId === "3".repeat(32) && span.kind === "server") as ReceivedSpan;
    const requestId = response.headers.get("x-request-id");
    const requestLine = stack.logs.find((line) => line.msg === "request" && line.requestId === requestId);
    expect(requestLine).toMatchObject({ trace_id: server.traceId, span_id: server.spanId, trace_flags: "01" });
    // The conversation store fails: its warning is written in the middle of the request (through the logger's mixin).
    const warnings = stack.logs.filter((line) => String(line.msg).startsWith("conversation lookup failed"));
    const ours = warnings.filter((line) => line.trace_id === server.traceId);
    expect(ours.map((line) => line.msg)).toEqual(["conversation lookup failed: the request is refused"]);
    for (const line of ours) expect(line.span_id).toBe(server.spanId);
    // Every such line of every request so far carries the ids of the request it was written for.
    expect(warnings.every((line) => typeof line.trace_id === "string" && typeof line.span_id === "string")).toBe(true);
  });

  it("traces a Responses API answer as `chat {model}` with the response's id", async () => {
    const response = await fetch(`${stack.url}/v1/responses`, {
      method: "POST",
      headers: headers({ traceparent: `00-${"4".repeat(32)}-${CALLER_SPAN}-01` }),
      body: JSON.stringify({ model: "acme/ask", input: "How many vacation days do employees get?" }),
    });
    const body = (await response.json()) as { id: string };
    expect(response.status).toBe(200);
    const spans = await traceOf(stack, "4".repeat(32), "POST /v1/responses");
    const expected = { name: "chat acme/ask", operation: "chat", model: "acme/ask", mode: "ask", workspace: "acme", stream: false } as const;
    const answer = expectAnswerSpan(spans, "4".repeat(32), expected);
    expect(answer.attributes["gen_ai.response.id"]).toBe(body.id);
    expect(answer.attributes["gen_ai.usage.output_tokens"]).toBeGreaterThan(0);
  });

  it("traces an MCP tool call as `execute_tool {name}`, with the tool and its usage", async () => {
    const response = await fetch(`${stack.url}/mcp`, {
      method: "POST",
      headers: headers({ traceparent: `00-${"7".repeat(32)}-${CALLER_SPAN}-01`, accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" }),
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "reason", arguments: { question: "How many vacation days do employees get?" } } }),
    });
    const body = (await response.json()) as { result: { isError?: boolean; structuredContent: { query_id: string } } };
    expect(response.status).toBe(200);
    expect(body.result.isError).toBeFalsy();
    const spans = await traceOf(stack, "7".repeat(32), "POST /mcp");
    const expected = { name: "execute_tool reason", operation: "execute_tool", tool: "reason", model: "reason", mode: "reason", workspace: "acme", stream: false } as const;
    const answer = expectAnswerSpan(spans, "7".repeat(32), expected);
    expect(answer.attributes["gen_ai.conversation.id"]).toBe(body.result.structuredContent.query_id);
    expect(answer.attributes["gen_ai.usage.output_tokens"]).toBeGreaterThan(0);
  });

  it("marks a failed answer: error.type on the answer span, the 502 on the server span", async () => {
    const { response } = await chat(stack, "Fail this one [fault:failed]", {}, { traceparent: `00-${"5".repeat(32)}-${CALLER_SPAN}-01` });
    expect(response.status).toBe(502);
    const spans = (await traceOf(stack, "5".repeat(32))).filter((span) => span.traceId === "5".repeat(32));
    const answer = spanNamed(spans, "chat ask");
    expect(answer.attributes).toMatchObject({ "error.type": "QueryFailedError", "gen_ai.response.finish_reasons": ["error"] });
    expect(answer.status.code).toBe(2);
    expect(answer.events.find((event) => event.name === "workspace_adapter.query.terminal")?.attributes["workspace_adapter.query.status"]).toBe("FAILED");
    const server = spanNamed(spans, "POST /v1/chat/completions");
    expect(server.attributes).toMatchObject({ "http.response.status_code": 502, "error.type": "502" });
    expect(server.status.code).toBe(2);
  });

  it("traces a request refused at the edge with its server span only", async () => {
    const response = await fetch(`${stack.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", traceparent: `00-${"6".repeat(32)}-${CALLER_SPAN}-01` },
      body: JSON.stringify(chatBody("no key")),
    });
    expect(response.status).toBe(401);
    const spans = (await traceOf(stack, "6".repeat(32))).filter((span) => span.traceId === "6".repeat(32));
    expect(spans.map((span) => span.name)).toEqual(["POST /v1/chat/completions"]);
    expect(spans[0]?.attributes["http.response.status_code"]).toBe(401);
    expect(spans[0]?.status.code).toBe(0);
  });
});

describe("tracing over OTLP/HTTP JSON, with message content opted in", () => {
  let stack: TracedProcess;
  beforeAll(async () => {
    stack = await startTracedProcess({
      env: {
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true",
        OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=secret%20value,x-team=search",
        OTEL_SERVICE_NAME: "adapter-under-test",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=test,service.name=overridden",
      },
    });
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
  });

  it("exports JSON with the configured headers and resource, and the prompt and answer on the answer span", async () => {
    const prompt = "How many vacation days do employees get?";
    const { response, text } = await chat(stack, prompt, {}, { traceparent: `00-${"7".repeat(32)}-${CALLER_SPAN}-01` });
    expect(response.status).toBe(200);
    const message = (JSON.parse(text) as { choices: { message: { content: string; reasoning_content?: string } }[] }).choices[0]!.message;
    const spans = (await traceOf(stack, "7".repeat(32))).filter((span) => span.traceId === "7".repeat(32));
    const exported = stack.receiver.exports[0];
    expect(exported?.contentType).toBe("application/json");
    expect(exported?.headers).toMatchObject({ "x-api-key": "secret value", "x-team": "search" });
    const answer = spanNamed(spans, "chat ask");
    expect(answer.resource).toMatchObject({ "service.name": "adapter-under-test", "deployment.environment.name": "test" });
    expect(JSON.parse(answer.attributes["gen_ai.input.messages"] as string)).toEqual([{ role: "user", parts: [{ type: "text", content: prompt }] }]);
    const output = JSON.parse(answer.attributes["gen_ai.output.messages"] as string) as { role: string; parts: { type: string; content: string }[]; finish_reason: string }[];
    expect(output[0]).toMatchObject({ role: "assistant", finish_reason: "stop" });
    expect(output[0]?.parts.find((part) => part.type === "text")?.content).toBe(message.content);
    expect(output[0]?.parts.find((part) => part.type === "reasoning")?.content).toBe(message.reasoning_content);
    expect(everything(spans)).not.toContain(API_KEY);
  });
});

describe("sampling (OTEL_TRACES_SAMPLER=parentbased_traceidratio, ratio 0)", () => {
  let stack: TracedProcess;
  beforeAll(async () => {
    stack = await startTracedProcess({ env: { OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0" } });
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
  });

  it("follows a sampled caller, samples nothing of its own, and still propagates the (unsampled) context", async () => {
    const sampled = await chat(stack, "What is the travel policy?", {}, { traceparent: `00-${"8".repeat(32)}-${CALLER_SPAN}-01` });
    expect(sampled.response.status).toBe(200);
    await traceOf(stack, "8".repeat(32));
    const unsampled = await chat(stack, "What is the travel policy?");
    expect(unsampled.response.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const spans = await stack.flush();
    const traces = new Set(spans.filter((span) => span.name !== "poll queries" && span.name !== "GET /queries").map((span) => span.traceId));
    expect([...traces]).toEqual(["8".repeat(32)]);
    const queryId = unsampled.response.headers.get("service-query-id") as string;
    const create = stack.upstream?.requests.filter((request) => request.method === "POST").at(-1);
    expect(create?.headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    expect(queryId).toBeTruthy();
    // Unsampled requests' log lines still carry their (unsampled) trace ids, to correlate with the upstream's logs.
    const line = stack.logs.find((entry) => entry.msg === "request" && entry.requestId === unsampled.response.headers.get("x-request-id"));
    expect(line?.trace_flags).toBe("00");
    expect(create?.headers.traceparent).toContain(line?.trace_id as string);
  });
});
