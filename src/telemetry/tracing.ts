import type { IncomingMessage } from "node:http";
import type { Attributes, Link, Span, SpanKind } from "@opentelemetry/api";

/** How a span starts: its kind (SpanKind's numbers), attributes and links. */
export interface SpanStart {
  kind: SpanKind;
  attributes?: Attributes;
  links?: Link[];
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
  /** Starts a request's server span: a child of the caller's W3C `traceparent` when it sends one, else a new trace. */
  startServerSpan(request: IncomingMessage, attributes: Attributes): Span;
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
