import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOtlpGrpcReceiver, type OtlpGrpcReceiver } from "../../helpers/otlp-grpc-receiver.js";
import type { ReceivedSpan } from "../../helpers/otlp-receiver.js";
import { chatBody, headers } from "../../helpers/start-stack.js";
import { startTracedProcess, type SpanReceiver, type TracedProcess } from "../../helpers/traced-process.js";
import { spanNamed } from "../../helpers/traced-stack.js";

// docs/observability.md#tracing: the adapter as a platform runs it (the entry point, its own process),
// configured the way OpenTelemetry is configured everywhere: a platform's auto-instrumentation, the
// propagators and the exporter protocol the standard variables name.

const CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";

/** Asks a chat completion of `stack` with `extra` headers, and reads it whole. */
async function ask(stack: TracedProcess<SpanReceiver>, extra: Record<string, string>, requestHeaders = headers(extra)): Promise<Response> {
  const response = await fetch(`${stack.url}/v1/chat/completions`, { method: "POST", headers: requestHeaders, body: JSON.stringify(chatBody("How many vacation days do employees get?")) });
  await response.text();
  return response;
}

/** Waits until the trace holds the adapter's server span and everything `ready` asks for (what it holds after 10 s otherwise). */
async function traceOf(stack: TracedProcess<SpanReceiver>, traceId: string, ready: (spans: ReceivedSpan[]) => boolean = () => true): Promise<ReceivedSpan[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const spans = (await stack.flush()).filter((span) => span.traceId === traceId);
    if ((spans.some((span) => span.name === "POST /v1/chat/completions" && span.scope === "workspace-openai-adapter") && ready(spans)) || Date.now() > deadline) return spans;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("under a platform's OpenTelemetry (node --import @opentelemetry/auto-instrumentations-node/register)", () => {
  let stack: TracedProcess;
  beforeAll(async () => {
    stack = await startTracedProcess({
      nodeArgs: ["--import", "@opentelemetry/auto-instrumentations-node/register"],
      // The adapter's own embedded workspace, in its process: the platform instruments its server too.
      ownWorkspace: true,
      env: { OTEL_SERVICE_NAME: "platform-adapter", OTEL_METRICS_EXPORTER: "none", OTEL_LOGS_EXPORTER: "none" },
    });
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
  });

  it("is one tree: the caller, the adapter's server and answer spans, the instrumented upstream call, the workspace's server span", async () => {
    const response = await ask(stack, {}, { authorization: "Bearer any", "content-type": "application/json", traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` });
    expect(response.status).toBe(200);
    const undiciCall = (spans: ReceivedSpan[]) => spans.find((span) => span.scope === "@opentelemetry/instrumentation-undici");
    const spans = await traceOf(stack, CALLER_TRACE, (all) => {
      const call = undiciCall(all);
      return call !== undefined && all.some((span) => span.parentSpanId === call.spanId) && all.some((span) => span.name === "chat ask");
    });
    const byId = new Map(spans.map((span) => [span.spanId, span]));

    // The adapter's server span continues the caller's trace (under the platform's HTTP server span, if any).
    const server = spans.find((span) => span.name === "POST /v1/chat/completions" && span.scope === "workspace-openai-adapter") as ReceivedSpan;
    expect(server.kind).toBe("server");
    let top = server;
    for (let parent = byId.get(top.parentSpanId); parent; parent = byId.get(parent.parentSpanId)) {
      expect(parent.scope).toBe("@opentelemetry/instrumentation-http");
      top = parent;
    }
    expect(top.parentSpanId).toBe(CALLER_SPAN);

    // The answer under it; the adapter's call span under the answer; the instrumented HTTP call under that.
    const answer = spanNamed(spans, "chat ask");
    expect(answer.parentSpanId).toBe(server.spanId);
    const create = spanNamed(spans.filter((span) => span.scope === "workspace-openai-adapter"), "POST /queries");
    expect(create.parentSpanId).toBe(answer.spanId);
    const call = undiciCall(spans.filter((span) => span.parentSpanId === create.spanId)) as ReceivedSpan;
    expect(call).toMatchObject({ kind: "client", name: "POST" });
    // The workspace service received the instrumented call's context: its server span is the call's child.
    const workspace = spans.find((span) => span.parentSpanId === call.spanId) as ReceivedSpan;
    expect(workspace).toMatchObject({ kind: "server", scope: "@opentelemetry/instrumentation-http" });

    // One tree: every span of the trace hangs, through spans of the trace, from the caller's.
    for (const span of spans) {
      let at: ReceivedSpan | undefined = span;
      while (at && at.parentSpanId !== CALLER_SPAN) at = byId.get(at.parentSpanId);
      expect(at, `${span.scope} ${span.name} reaches the caller's span`).toBeDefined();
    }
    // One provider, one export: the adapter's spans leave with the platform's, under its resource.
    const resources = new Set(stack.receiver.spans().map((span) => JSON.stringify(span.resource)));
    expect(resources.size).toBe(1);
    expect(server.resource["service.name"]).toBe("platform-adapter");
    expect(stack.logs.find((line) => line.msg === "tracing on: the process's OpenTelemetry SDK (its exporter, sampler and propagators)")).toBeDefined();
    // The request's log line names the adapter's server span.
    expect(stack.logs.find((line) => line.msg === "request")).toMatchObject({ trace_id: CALLER_TRACE, span_id: server.spanId });
  });
});

describe("OTEL_PROPAGATORS=b3", () => {
  let stack: TracedProcess;
  beforeAll(async () => {
    stack = await startTracedProcess({ env: { OTEL_PROPAGATORS: "b3" } });
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
  });

  it("continues a caller's b3 context and sends b3 (not traceparent) to the workspace service", async () => {
    const response = await ask(stack, { b3: `${CALLER_TRACE}-${CALLER_SPAN}-1` });
    expect(response.status).toBe(200);
    const spans = await traceOf(stack, CALLER_TRACE, (all) => all.some((span) => span.name === "POST /queries"));
    const server = spanNamed(spans, "POST /v1/chat/completions");
    expect(server.parentSpanId).toBe(CALLER_SPAN);
    const create = spanNamed(spans, "POST /queries");
    const received = stack.upstream?.requests.find((request) => request.method === "POST" && request.url === "/queries");
    expect(received?.headers.b3).toBe(`${CALLER_TRACE}-${create.spanId}-1`);
    expect(received?.headers.traceparent).toBeUndefined();
  });
});

describe("OTEL_EXPORTER_OTLP_PROTOCOL=grpc", () => {
  let stack: TracedProcess<OtlpGrpcReceiver>;
  beforeAll(async () => {
    stack = await startTracedProcess({ receiver: await startOtlpGrpcReceiver(), env: { OTEL_EXPORTER_OTLP_PROTOCOL: "grpc", OTEL_EXPORTER_OTLP_HEADERS: "x-team=search" } });
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
  });

  it("exports to a gRPC receiver (the collector's trace service), with the configured headers", async () => {
    const response = await ask(stack, { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` });
    expect(response.status).toBe(200);
    const spans = await traceOf(stack, CALLER_TRACE, (all) => all.some((span) => span.name === "chat ask"));
    expect(spanNamed(spans, "POST /v1/chat/completions").parentSpanId).toBe(CALLER_SPAN);
    expect(spanNamed(spans, "chat ask").attributes["gen_ai.operation.name"]).toBe("chat");
    expect(stack.receiver.calls[0]?.["x-team"]).toBe("search");
    expect(stack.logs.find((line) => line.msg === `tracing on: OTLP grpc to ${stack.receiver.endpoint}, sampler parentbased_always_on`)).toBeDefined();
  });
});
