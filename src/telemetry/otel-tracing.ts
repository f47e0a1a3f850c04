import type { IncomingMessage } from "node:http";
import {
  context,
  createContextKey,
  defaultTextMapSetter,
  propagation,
  ROOT_CONTEXT,
  type Context,
  type Span,
  type TextMapPropagator,
  type Tracer,
  type TracerProvider,
  trace,
} from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { CompositePropagator, parseTraceParent, W3CBaggagePropagator, W3CTraceContextPropagator } from "@opentelemetry/core";
import { SCOPE } from "./otlp-conventions.js";
import { type DroppedSpans, KIND, logFieldsOf, type ServerSpan, type SpanStart, type Tracing, type TracingStart } from "./tracing.js";

/** What the adapter's tracing runs on: a tracer of some provider, the propagators, and what the provider's owner offers. */
export interface TracingParts {
  tracer: Tracer;
  /** How contexts cross HTTP (`OTEL_PROPAGATORS`); W3C trace context and baggage when not given. */
  propagator?: TextMapPropagator;
  capturesContent: boolean;
  /** Whether the sampler decides by trace (`Tracing.dropsWholeTraces`); not assumed when not given. */
  dropsWholeTraces?: boolean;
  /** Spans the export pipeline lost (none counted when not given: the pipeline is not the adapter's). */
  dropped?: () => DroppedSpans;
  flush?: () => Promise<void>;
  shutdown?: () => Promise<void>;
}

const NOTHING_DROPPED: DroppedSpans = { queue_full: 0, export_failed: 0 };

/**
 * The adapter's tracing on OpenTelemetry's API (`Tracing`, tracing.ts) over any tracer: the
 * process's own (a platform's instrumentation), the one `startTracing` set up, or one given by
 * whoever embeds the adapter (the tests: the SDK's in-memory exporter, or a loopback receiver).
 * Contexts are the API's, so a global context manager is needed: one is registered when the
 * process has none (the API's default propagates nothing).
 */
export function tracingOver(parts: TracingParts): Tracing {
  ensureContextManager();
  return new ApiTracing(parts);
}

/**
 * Tracing on the tracer provider a platform registered for the process: its sampler, resource,
 * propagators (the API's global ones) and export. The adapter adds no provider, exporter or
 * context manager of its own, and counts no dropped spans (the platform's SDK does); it only
 * flushes the provider before the process exits, when the provider can.
 */
export function platformTracing(provider: TracerProvider, serviceVersion: string, capturesContent: boolean): TracingStart {
  const flushable = provider as TracerProvider & { forceFlush?: () => Promise<void> };
  const flush = () => (typeof flushable.forceFlush === "function" ? flushable.forceFlush() : Promise.resolve());
  const tracer = provider.getTracer(SCOPE, serviceVersion);
  const tracing = tracingOver({ tracer, propagator: propagation, capturesContent, flush, shutdown: flush });
  const summary = `tracing on: the process's OpenTelemetry SDK (its exporter, sampler and propagators)${contentNote(capturesContent)}`;
  return { tracing, summary, warnings: [] };
}

/** What the start-up log line adds when prompts and answers go on spans. */
export function contentNote(capturesContent: boolean): string {
  return capturesContent ? ", message content captured" : "";
}

class ApiTracing implements Tracing {
  readonly capturesContent: boolean;
  readonly dropsWholeTraces: boolean;
  private readonly tracer: Tracer;
  private readonly propagator: TextMapPropagator;

  constructor(private readonly parts: TracingParts) {
    this.tracer = parts.tracer;
    this.propagator = parts.propagator ?? W3C_PROPAGATORS;
    this.capturesContent = parts.capturesContent;
    this.dropsWholeTraces = parts.dropsWholeTraces ?? false;
  }

  get droppedSpans(): DroppedSpans {
    return this.parts.dropped?.() ?? NOTHING_DROPPED;
  }

  startServerSpan(request: IncomingMessage): ServerSpan {
    // A platform's HTTP instrumentation has made its own server span active already: nest under it.
    const active = context.active();
    const parent = trace.getSpan(active) ? active : this.propagator.extract(ROOT_CONTEXT, request.headers, HEADERS);
    const span = this.tracer.startSpan(request.method ?? "HTTP", SERVER, parent);
    return { span, context: trace.setSpan(parent, span) };
  }

  startSpan(name: string, start: SpanStart, parent?: Span | string): Span {
    const under = parent === undefined ? ROOT_CONTEXT : typeof parent === "string" ? remoteParent(parent) : trace.setSpan(ROOT_CONTEXT, parent);
    return this.tracer.startSpan(name, start, under);
  }

  within<T>(within: Context, work: () => T): T {
    return context.with(within, work);
  }

  withSpan<T>(span: Span, work: () => T): T {
    return context.with(trace.setSpan(context.active(), span), work);
  }

  activeSpan(): Span | undefined {
    return trace.getSpan(context.active());
  }

  detached<T>(work: () => T): T {
    return context.with(ROOT_CONTEXT, work);
  }

  headersOf(span: Span): Record<string, string> {
    const headers: Record<string, string> = {};
    this.propagator.inject(trace.setSpan(context.active(), span), headers, defaultTextMapSetter);
    return headers;
  }

  logFields(): Record<string, string> {
    const span = trace.getSpan(context.active());
    return span ? logFieldsOf(span) : {};
  }

  // A failed export is reported as it happens, never thrown at the caller.
  flush(): Promise<void> {
    return (this.parts.flush?.() ?? Promise.resolve()).catch(() => undefined);
  }

  shutdown(): Promise<void> {
    return (this.parts.shutdown?.() ?? Promise.resolve()).catch(() => undefined);
  }
}

const SERVER: SpanStart = { kind: KIND.server };

/** The specification's default propagators: W3C trace context and baggage. */
const W3C_PROPAGATORS = new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] });

/** Reads a request's headers for the propagators (node lowercases their names, as the propagators ask). */
const HEADERS = {
  keys: (headers: IncomingMessage["headers"]) => Object.keys(headers),
  get: (headers: IncomingMessage["headers"], key: string) => headers[key],
};

/** The context a W3C `traceparent` from another replica names (a new trace when it is malformed). */
function remoteParent(traceparent: string): Context {
  const parent = parseTraceParent(traceparent);
  return parent ? trace.setSpanContext(ROOT_CONTEXT, { ...parent, isRemote: true }) : ROOT_CONTEXT;
}

/** Registers a context manager (async local storage, as the SDK's) unless the process has one already. */
function ensureContextManager(): void {
  const probe = ROOT_CONTEXT.setValue(createContextKey("workspace-openai-adapter context probe"), true);
  if (context.with(probe, () => context.active() === probe)) return;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
}
