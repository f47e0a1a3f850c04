import type { IncomingMessage } from "node:http";
import { type Attributes, type Context, INVALID_SPAN_CONTEXT, type Link, ROOT_CONTEXT, type Span, type SpanKind, trace } from "@opentelemetry/api";

/** How a span starts: its kind (SpanKind's numbers), attributes and links. */
export interface SpanStart {
  kind: SpanKind;
  attributes?: Attributes;
  links?: Link[];
}

/** Why spans were lost (the label of `adapter_trace_spans_dropped_total`, docs/observability.md#how-spans-leave). */
export type DropReason = "queue_full" | "export_failed";

/** Spans lost so far, by reason. */
export type DroppedSpans = Readonly<Record<DropReason, number>>;

/** What starting tracing gave: the tracing (undefined when off), a line for the start-up log, ignored settings. */
export interface TracingStart {
  tracing: Tracing | undefined;
  summary: string;
  /** Settings the specification says to warn about and replace by their defaults. */
  warnings: string[];
}

/** A request's server span, and the context its handling runs in: the span, over what the caller propagated (its baggage too). */
export interface ServerSpan {
  readonly span: Span;
  readonly context: Context;
}

/**
 * The adapter's tracing (docs/observability.md): OpenTelemetry's API over a tracer provider, the
 * process's own or one the adapter set up (`startTracing`). Owned by whoever started it (`main.ts`),
 * handed to `createAdapter`; everything that traces holds it as an optional dependency of the
 * composition (the request log, the upstream client, the poller), so with tracing off nothing of
 * OpenTelemetry's SDK is loaded and the layers below take no span at all. The adapter's spans are
 * the active context while their work runs (the API's context), so spans of a platform's own
 * instrumentation (undici, http, ioredis) nest under them, and the upstream client finds the span
 * its call goes under there rather than having it handed down each layer.
 */
export interface Tracing {
  /** Whether prompts and answers may go on spans (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`). */
  readonly capturesContent: boolean;
  /**
   * Whether the sampler decides by trace, so that nothing under a span it dropped is ever recorded:
   * true of every sampler `OTEL_TRACES_SAMPLER` names (parent-based ones drop the children of a
   * dropped span, `traceidratio` decides by the trace id, `always_*` alike for all). Work under a
   * dropped span then starts no span of its own (an answer's), and only the trace's context goes on.
   * Not assumed of a platform's sampler, which may decide span by span.
   */
  readonly dropsWholeTraces: boolean;
  /**
   * Starts a request's server span: under the span active when the request arrived (a platform's
   * HTTP instrumentation), else under the context the caller propagated (`traceparent`, b3… as
   * `OTEL_PROPAGATORS` names them), else a new trace.
   */
  startServerSpan(request: IncomingMessage): ServerSpan;
  /**
   * Starts a span under `parent`: a span of this process, a W3C `traceparent` received from
   * elsewhere (another replica), or nothing for a new trace (never the active span: shared work
   * such as a poll is no request's).
   */
  startSpan(name: string, start: SpanStart, parent?: Span | string): Span;
  /** Runs `work` in `context` (a request's), in its async continuations too. */
  within<T>(context: Context, work: () => T): T;
  /**
   * Runs `work` with `span` as the active span, in its async continuations too: the parent of every
   * upstream call (and every instrumented call) started meanwhile, and the span of its log lines.
   */
  withSpan<T>(span: Span, work: () => T): T;
  /** The active span: the one an upstream call made now goes under, or none (the call is then not traced). */
  activeSpan(): Span | undefined;
  /** Runs `work` with no active span (shared work that merely starts while a request is served). */
  detached<T>(work: () => T): T;
  /** The headers that carry `span`'s context (and the active baggage) to a call, as `OTEL_PROPAGATORS` names them. */
  headersOf(span: Span): Record<string, string>;
  /** The trace fields of a log line written now (a pino mixin): `trace_id`, `span_id`, `trace_flags`, or none. */
  logFields(): Record<string, string>;
  /** Spans lost so far (for `adapter_trace_spans_dropped_total`); none counted where the process's own SDK exports. */
  readonly droppedSpans: DroppedSpans;
  /** Exports what is buffered (never rejects: a failed export is reported as it happens). */
  flush(): Promise<void>;
  /** Exports what is buffered and stops what the adapter set up (never rejects either). */
  shutdown(): Promise<void>;
}

/** The W3C `traceparent` of a call made within `span` (version 00): what replicas send each other with shared polls. */
export function traceparentOf(span: Span): string {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, "0")}`;
}

/** The trace fields a log line about `span` carries (the names pino's OpenTelemetry instrumentation uses). */
export function logFieldsOf(span: Span): Record<string, string> {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return { trace_id: traceId, span_id: spanId, trace_flags: `0${traceFlags.toString(16)}`.slice(-2) };
}

/**
 * The pino mixin that gives every log line the trace fields of the span being served (`logFields`),
 * unless the line names its span itself (the request line, written as the response closes).
 */
export function traceLogMixin(tracing: Tracing): (fields: object) => Record<string, string> {
  return (fields) => ("trace_id" in fields ? {} : tracing.logFields());
}

/** SpanKind's values, as numbers (what `SpanStart.kind` takes). */
export const KIND = { internal: 0, server: 1, client: 2, producer: 3, consumer: 4 } as const satisfies Record<string, SpanKind>;

/** SpanStatusCode's error value. */
export const STATUS_ERROR = 2;

/** The span of nothing traced: the API's non-recording span of invalid ids, never propagated. */
const NO_SPAN = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/**
 * Tracing that records nothing, for the parts that take a `Tracing` when tracing is off (the API's
 * no-op pattern): its spans are one span that records nothing, it enters no context, and it names
 * no active span, so no upstream call is traced.
 */
export const NOOP_TRACING: Tracing = {
  capturesContent: false,
  dropsWholeTraces: true,
  droppedSpans: { queue_full: 0, export_failed: 0 },
  startServerSpan: () => ({ span: NO_SPAN, context: trace.setSpan(ROOT_CONTEXT, NO_SPAN) }),
  startSpan: () => NO_SPAN,
  within: (_context, work) => work(),
  withSpan: (_span, work) => work(),
  activeSpan: () => undefined,
  detached: (work) => work(),
  headersOf: () => ({}),
  logFields: () => ({}),
  flush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(),
};
