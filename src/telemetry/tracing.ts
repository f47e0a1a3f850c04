import type { IncomingMessage } from "node:http";
import type { Attributes, Link, Span, SpanKind } from "@opentelemetry/api";
import type { SpanExporter } from "@opentelemetry/sdk-trace";
import { UnsampledSpan } from "./recorded-span.js";

/**
 * How a span starts: its kind (SpanKind's numbers), attributes and links. The attributes object
 * and the links array become the span's own (built once by the caller, never copied): pass ones
 * made for this span. The attributes may be given as a function that builds them, called only
 * when the sampler records the span (none of the samplers reads attributes: span-sampling.ts), so
 * a dropped span costs no attributes.
 */
export interface SpanStart {
  kind: SpanKind;
  attributes?: Attributes | (() => Attributes);
  links?: Link[];
}

/** Why spans were lost (the label of `adapter_trace_spans_dropped_total`, docs/observability.md#how-spans-leave). */
export type DropReason = "queue_full" | "export_failed" | "worker_stopped";

/** Spans lost so far, by reason. */
export type DroppedSpans = Readonly<Record<DropReason, number>>;

/** What starting tracing gave: the tracing (undefined when off), a line for the start-up log, ignored settings. */
export interface TracingStart {
  tracing: Tracing | undefined;
  summary: string;
  /** Settings the specification says to warn about and replace by their defaults. */
  warnings: string[];
}

/** What tracing needs beside the environment. */
export interface TracingOptions {
  /** `service.version` of the resource. */
  serviceVersion: string;
  /**
   * Told what the log should say about export: failed exports (the first failure, then at most
   * one line a minute with how many failed meanwhile, and once when exports succeed again),
   * spans dropped because the exporter cannot keep up (at most a line a minute), a stopped
   * export worker.
   */
  onExportError?: (message: string) => void;
  /**
   * Replaces the OTLP export worker by an SDK exporter on the event loop (tests read spans from
   * memory with the SDK's InMemorySpanExporter).
   */
  exporter?: SpanExporter;
}

/**
 * The adapter's tracing, when the standard `OTEL_*` variables turn it on (`startTracing`). Owned
 * by whoever started it (`main.ts`), handed to `createAdapter`; everything that traces holds it as
 * an optional dependency of the composition (the request log, the upstream client, the poller),
 * so with tracing off the SDK is never loaded; the layers below take no span at all. Context is
 * the adapter's own (no global context manager, so two adapters in one process trace apart): an
 * answer's span is the parent of the upstream calls made within it (`withParentSpan`), found by
 * the client through `parentSpan()` rather than handed down each layer.
 */
export interface Tracing {
  /** Whether prompts and answers may go on spans (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`). */
  readonly capturesContent: boolean;
  /**
   * Starts a request's server span: a child of the caller's W3C `traceparent` when it sends one,
   * else a new trace. Its attributes are facts its caller gives it (`withFacts`) once it records.
   */
  startServerSpan(request: IncomingMessage): Span;
  /**
   * Starts a span under `parent`: a span of this process, a W3C `traceparent` received from
   * elsewhere (another replica), or nothing for a new trace.
   */
  startSpan(name: string, start: SpanStart, parent?: Span | string): Span;
  /**
   * Runs `work` with `span` as the parent of every upstream call started meanwhile, in its async
   * continuations too (an answer's queries are created under its span, a poll's list calls under
   * the poll's).
   */
  withParentSpan<T>(span: Span, work: () => T): T;
  /** The span an upstream call made now goes under (`withParentSpan`), or none: the call is then not traced. */
  parentSpan(): Span | undefined;
  /** Runs `work` with `span` as the span of every log line written meanwhile, in its async continuations too. */
  withLogSpan<T>(span: Span, work: () => T): T;
  /** Runs `work` with no span for its log lines nor parent for its calls (shared work that merely starts while a request is served). */
  withoutLogSpan<T>(work: () => T): T;
  /** The trace fields of a log line written now (a pino mixin): `trace_id`, `span_id`, `trace_flags`, or none. */
  logFields(): Record<string, string>;
  /** Spans lost so far (for `adapter_trace_spans_dropped_total`). */
  readonly droppedSpans: DroppedSpans;
  /** Exports what is buffered (never rejects: a failed export is reported through `onExportError`). */
  flush(): Promise<void>;
  /** Exports what is buffered and stops (never rejects either). */
  shutdown(): Promise<void>;
}

/** The W3C `traceparent` of a call made within `span` (version 00). */
export function traceparentOf(span: Span): string {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, "0")}`;
}

/** The trace fields a log line about `span` carries (the names pino's OpenTelemetry instrumentation uses). */
export function logFieldsOf(span: Span): Record<string, string> {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return { trace_id: traceId, span_id: spanId, trace_flags: `0${traceFlags.toString(16)}`.slice(-2) };
}

/** SpanKind's values, copied (the API's enum would load `@opentelemetry/api` where only its types are needed). */
export const KIND = { internal: 0, server: 1, client: 2, producer: 3, consumer: 4 } as const satisfies Record<string, SpanKind>;

/** SpanStatusCode's error value, copied for the same reason. */
export const STATUS_ERROR = 2;

/** The context of nothing traced: the W3C trace context's invalid ids, never propagated. */
const NO_SPAN = new UnsampledSpan({ traceId: "0".repeat(32), spanId: "0".repeat(16), traceFlags: 0 });
const NOTHING_DROPPED: DroppedSpans = { queue_full: 0, export_failed: 0, worker_stopped: 0 };

/**
 * Tracing that records nothing, for the parts that take a `Tracing` when tracing is off (the
 * OpenTelemetry API's no-op tracer pattern): its spans are one span of invalid ids that records
 * nothing, no context is entered, and no upstream call finds a parent span, so none is traced.
 */
export const NOOP_TRACING: Tracing = {
  capturesContent: false,
  droppedSpans: NOTHING_DROPPED,
  startServerSpan: () => NO_SPAN,
  startSpan: () => NO_SPAN,
  withParentSpan: (_span, work) => work(),
  parentSpan: () => undefined,
  withLogSpan: (_span, work) => work(),
  withoutLogSpan: (work) => work(),
  logFields: () => ({}),
  flush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(),
};
