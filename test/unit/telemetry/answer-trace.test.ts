import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { QuerySnapshot } from "../../../src/core/query-snapshot.js";
import { SpanAnswerTrace } from "../../../src/telemetry/answer-trace.js";
import { exportFailures } from "../../../src/telemetry/export-reports.js";
import { tracingOver } from "../../../src/telemetry/otel-tracing.js";
import { startTracing } from "../../../src/telemetry/start-tracing.js";
import type { Tracing } from "../../../src/telemetry/tracing.js";

// The answer span on its own (docs/observability.md), read from the SDK's in-memory exporter.

const started: Tracing[] = [];

function tracingWith(exporter: InMemorySpanExporter, options: { capturesContent?: boolean } = {}): Tracing {
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const tracing = tracingOver({ tracer: provider.getTracer("test"), capturesContent: options.capturesContent ?? false, flush: () => provider.forceFlush(), shutdown: () => provider.shutdown() });
  started.push(tracing);
  return tracing;
}

afterEach(async () => {
  vi.unstubAllEnvs();
  await Promise.all(started.splice(0).map((tracing) => tracing.shutdown()));
});

function snapshot(fields: Partial<QuerySnapshot>): QuerySnapshot {
  return { id: "q1", status: "PROCESSING", output: "", steps: [], sources: [], usage: undefined, ...fields };
}

const START = { operation: "chat", model: "acme/reason", mode: "reason", workspace: "acme", stream: true, principal: "abcdefghijklmnop" } as const;

describe("an answer's span", () => {
  it("records the first step and the first text once, the end of every choice, and the finish reasons", async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = tracingWith(exporter);
    const parent = tracing.startSpan("parent", { kind: 1 });
    const trace = new SpanAnswerTrace(tracing, parent, START);
    trace.planned({ prompt: "secret prompt", queries: [{}, {}], continued: false });
    trace.created(1, "q2");
    trace.created(0, "q1");
    trace.snapshot(0, snapshot({ steps: [{ text: "looking" }] }));
    trace.snapshot(1, snapshot({ id: "q2", steps: [{ text: "looking" }], output: "An" }));
    trace.snapshot(0, snapshot({ steps: [{}, {}], output: "An answer" }));
    trace.snapshot(1, snapshot({ id: "q2", status: "PROCESSED", output: "An answer" }));
    trace.snapshot(0, snapshot({ status: "FAILED", output: "went wrong" }));
    trace.end(true);
    parent.end();
    await tracing.flush();
    const span = exporter.getFinishedSpans().find((each) => each.name === "chat acme/reason") as ReadableSpan;
    expect(span.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect(span.events.map((event) => [event.name, event.attributes])).toEqual([
      ["workspace_adapter.first_step", { "workspace_adapter.choice": 0 }],
      ["workspace_adapter.first_text", { "workspace_adapter.choice": 1 }],
      ["workspace_adapter.query.terminal", { "workspace_adapter.choice": 1, "workspace_adapter.query.status": "PROCESSED" }],
      ["workspace_adapter.query.terminal", { "workspace_adapter.choice": 0, "workspace_adapter.query.status": "FAILED" }],
    ]);
    expect(span.attributes).toMatchObject({
      "gen_ai.conversation.id": "q1",
      "workspace_adapter.query.ids": ["q1", "q2"],
      "gen_ai.request.choice.count": 2,
      "gen_ai.response.finish_reasons": ["error", "stop"],
      "workspace_adapter.credential.hash_prefix": "abcdefgh",
    });
    expect(JSON.stringify(span.attributes)).not.toContain("secret prompt");
  });

  it("is `execute_tool {name}` for an MCP tool call, with the tool's name", async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = tracingWith(exporter);
    const parent = tracing.startSpan("POST /mcp", { kind: 1 });
    new SpanAnswerTrace(tracing, parent, { ...START, operation: "execute_tool", tool: "ask_workspace", model: "ask", mode: "ask", stream: false }).end(true);
    await tracing.flush();
    const [span] = exporter.getFinishedSpans();
    expect(span?.name).toBe("execute_tool ask_workspace");
    expect(span?.attributes).toMatchObject({ "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "ask_workspace", "gen_ai.tool.type": "function" });
  });

  it("ends at the response's close, carrying usage counted after it, and ignores a failure reported after the end", async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = tracingWith(exporter, { capturesContent: true });
    const trace = new SpanAnswerTrace(tracing, tracing.startSpan("parent", { kind: 1 }), START);
    trace.planned({ prompt: "the prompt", queries: [{}], continued: true });
    let count!: (usage: { promptTokens: number; completionTokens: number; reasoningTokens: number }) => void;
    trace.delivered([{ content: "the answer", reasoning: "" }], new Promise((resolve) => (count = resolve)));
    const closedAt = Date.now();
    trace.end(false);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(exporter.getFinishedSpans()).toEqual([]);
    const countedAt = Date.now();
    count({ promptTokens: 3, completionTokens: 5, reasoningTokens: 0 });
    trace.fail(new Error("too late"));
    await new Promise((resolve) => setImmediate(resolve));
    await tracing.flush();
    const [span] = exporter.getFinishedSpans();
    expect(span?.attributes).toMatchObject({
      "gen_ai.usage.input_tokens": 3,
      "gen_ai.usage.output_tokens": 5,
      "workspace_adapter.query.continued": true,
      "workspace_adapter.completed": false,
      "gen_ai.input.messages": JSON.stringify([{ role: "user", parts: [{ type: "text", content: "the prompt" }] }]),
      "gen_ai.output.messages": JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: "the answer" }], finish_reason: "stop" }]),
    });
    expect(span?.attributes["error.type"]).toBeUndefined();
    const endMs = span!.endTime[0] * 1000 + span!.endTime[1] / 1e6;
    // The span ends at the close, not when the usage came (at least 30 ms later), however slow the machine
    // (the SDK anchors its clock to Date.now(): up to a millisecond apart): nearer the close than the count.
    expect(endMs).toBeGreaterThanOrEqual(closedAt - 1);
    expect(endMs - closedAt).toBeLessThan((countedAt - closedAt) / 2);
  });
});

describe("export failures", () => {
  it("are reported once, then at most once a minute, and their end is reported", () => {
    let now = 0;
    const reports: string[] = [];
    const seen = exportFailures((message) => reports.push(message), () => now);
    seen(new Error("503 from the collector"));
    now += 30_000;
    seen(new Error("503 from the collector"));
    seen(new Error("503 from the collector"));
    expect(reports).toEqual(["trace export failed, spans are lost (1 batch so far): 503 from the collector"]);
    now += 31_000;
    seen(new Error("timeout"));
    expect(reports[1]).toBe("trace export failed, spans are lost (4 batches so far): timeout");
    seen(undefined);
    expect(reports[2]).toBe("trace export works again (4 batches of spans lost)");
    seen(undefined);
    expect(reports).toHaveLength(3);
  });
});

describe("with tracing off", () => {
  it("starts nothing", async () => {
    vi.stubEnv("OTEL_EXPORTER_OTLP_ENDPOINT", "");
    vi.stubEnv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "");
    expect(await startTracing({ serviceVersion: "test" })).toEqual({ tracing: undefined, summary: "tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT)", warnings: [] });
    vi.stubEnv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9");
    vi.stubEnv("OTEL_SDK_DISABLED", "true");
    expect((await startTracing({ serviceVersion: "test" })).tracing).toBeUndefined();
  });
});
