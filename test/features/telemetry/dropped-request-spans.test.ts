import { type Attributes, type Context, SpanKind, trace } from "@opentelemetry/api";
import { InMemorySpanExporter, type Sampler, SamplingDecision, type SamplingResult, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbeddedWorkspace, type RunningWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import { tracingOver } from "../../../src/telemetry/otel-tracing.js";
import { SCOPE } from "../../../src/telemetry/otlp-conventions.js";
import { type RecordingProxy, startRecordingProxy } from "../../helpers/recording-proxy.js";
import { chatBody, FIXTURE_DOCUMENTS, headers, type RunningAdapter, startAdapter } from "../../helpers/start-stack.js";

// Tracing.dropsWholeTraces (src/telemetry/tracing.ts): under a request span the sampler dropped, the
// adapter starts no answer span when its sampler decides by trace (its own provider's), and still
// does on a provider whose sampler may decide span by span (a platform's).

/** A sampler that drops every server span and records every other one: a platform's rule, span by span. */
const dropsServerSpans: Sampler = {
  shouldSample: (_context: Context, _traceId: string, _name: string, kind: SpanKind, _attributes: Attributes): SamplingResult => ({
    decision: kind === SpanKind.SERVER ? SamplingDecision.NOT_RECORD : SamplingDecision.RECORD_AND_SAMPLED,
  }),
  toString: () => "drops server spans",
};

describe.each([
  { dropsWholeTraces: true, answerSpans: 0 },
  { dropsWholeTraces: false, answerSpans: 1 },
])("a request span the sampler dropped, dropsWholeTraces $dropsWholeTraces", ({ dropsWholeTraces, answerSpans }) => {
  let workspace: RunningWorkspace;
  let upstream: RecordingProxy;
  let adapter: RunningAdapter;
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ sampler: dropsServerSpans, spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  // The request's log line is written once its spans have ended (request-log.ts: the spans' subscriber runs first).
  const logged: string[] = [];
  const logger = pino({ level: "info" }, new Writable({ write: (chunk: Buffer, _encoding, done) => (logged.push(chunk.toString("utf8")), done()) }));

  beforeAll(async () => {
    workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], apiKeys: ["sk-test-key"], stepDelayMs: 0 });
    upstream = await startRecordingProxy(workspace.url);
    const tracing = tracingOver({ tracer: provider.getTracer(SCOPE, "test"), capturesContent: false, dropsWholeTraces });
    adapter = await startAdapter(upstream.url, {}, logger, { tracing });
  });
  afterAll(async () => {
    await adapter?.close();
    await provider.shutdown();
    await upstream?.close();
    await workspace?.close();
  });

  it(`records ${answerSpans} answer span, and the upstream call carries the request's trace`, async () => {
    const response = await fetch(`${adapter.url}/v1/chat/completions`, { method: "POST", headers: headers(), body: JSON.stringify(chatBody("What is the travel policy?")) });
    expect(response.status).toBe(200);
    await response.text();
    await expect.poll(() => logged.some((line) => line.includes('"msg":"request"'))).toBe(true);
    const create = upstream.requests.find((request) => request.method === "POST");
    const traceparent = String(create?.headers.traceparent);
    const answers = exporter.getFinishedSpans().filter((span) => span.name === "chat ask");
    expect(answers).toHaveLength(answerSpans);
    expect(exporter.getFinishedSpans().filter((span) => span.kind === SpanKind.SERVER)).toHaveLength(0);
    if (dropsWholeTraces) {
      // The request's own (dropped) span is the parent the workspace service is told of: "not sampled".
      expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    } else {
      // The answer's span recorded under it; the call is its child, sampled.
      const answer = answers[0];
      expect(traceparent.split("-")[1]).toBe(answer?.spanContext().traceId);
      expect(traceparent).toMatch(/-01$/);
      expect(exporter.getFinishedSpans().some((span) => span.parentSpanContext?.spanId === answer?.spanContext().spanId)).toBe(true);
    }
    expect(trace.getActiveSpan()).toBeUndefined();
  });
});
