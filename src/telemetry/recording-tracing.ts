import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { hostname } from "node:os";
import { Worker } from "node:worker_threads";
import type { Attributes, Span, SpanContext } from "@opentelemetry/api";
import { parseTraceParent, TraceState } from "@opentelemetry/core";
import { defaultResource, resourceFromAttributes } from "@opentelemetry/resources";
import { AttributeCache } from "./attribute-cache.js";
import type { ExportWorkerData } from "./export-messages.js";
import { readBatchSettings, readSpanLimits } from "./export-settings.js";
import { InProcessExport } from "./in-process-export.js";
import type { Scope } from "./otlp-request.js";
import { writeJsonSpan } from "./otlp-span-json.js";
import { writeProtobufSpan } from "./otlp-span-protobuf.js";
import { clockNow, RecordedSpan, type SpanSink, type TraceClock, UnsampledSpan } from "./recorded-span.js";
import { SpanHandoff } from "./span-handoff.js";
import { SpanIds } from "./span-ids.js";
import { ringMemory } from "./span-ring.js";
import { type SpanSampling, spanSampling } from "./span-sampling.js";
import type { Environment } from "./tracing-environment.js";
import { readTracingSettings, type TracingSettings } from "./tracing-settings.js";
import { type DroppedSpans, KIND, logFieldsOf, type SpanStart, type Tracing, type TracingOptions, type TracingStart } from "./tracing.js";

/** The instrumentation scope every span of the adapter carries. */
const SCOPE = "workspace-openai-adapter";

/** The export worker reads spans from shared memory and holds one request body: a small heap does. */
const WORKER_LIMITS = { maxOldGenerationSizeMb: 64 };

/** Where ended spans go, and how they are flushed. */
interface SpanExportSink extends SpanSink {
  readonly dropped: DroppedSpans;
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * Builds tracing (loaded only when it is on; docs/observability.md#how-spans-leave): spans are
 * recorded on the event loop by the adapter's own light span (`RecordedSpan`), sampled by the
 * SDK's samplers as `OTEL_TRACES_SAMPLER` names them, encoded when they end and handed to the
 * export worker, which batches them and sends them over OTLP/HTTP in the protocol asked for.
 */
export async function createRecordingTracing(env: Environment, options: TracingOptions): Promise<TracingStart> {
  const settings = readTracingSettings(env);
  const warnings = [...settings.warnings];
  const batch = readBatchSettings(env, warnings);
  const limits = readSpanLimits(env, warnings);
  const scope: Scope = { name: SCOPE, version: options.serviceVersion };
  const resource = resourceAttributes(settings, options.serviceVersion);
  const report = options.onExportError ?? (() => undefined);
  const { protocol, url, headers } = settings;
  const memory = ringMemory(batch.maxQueueSize);
  // The attributes every span repeats (keys, and the operation, model, route, status) are encoded once.
  const attributes = new AttributeCache();
  const sink = options.exporter
    ? new InProcessExport(options.exporter, resource, scope, batch, report)
    : new SpanHandoff({
      encode: settings.protocol === "http/json" ? (writer, span) => writeJsonSpan(writer, span, limits) : (writer, span) => writeProtobufSpan(writer, span, limits, attributes),
      batch,
      memory,
      // The exporter in the worker reads the other OTEL_EXPORTER_OTLP_* variables (timeout, compression, certificates) from `env`.
      startWorker: (ring) => {
        const workerData: ExportWorkerData = { protocol, url, headers, resource, scope, batch, ring };
        return new Worker(exportWorkerUrl(), { workerData, env: { ...env }, resourceLimits: WORKER_LIMITS });
      },
      report,
    });
  const ratio = settings.sampler.endsWith("traceidratio") ? ` ${settings.ratio}` : "";
  return {
    tracing: new RecordingTracing(sink, spanSampling(settings), settings.capturesContent),
    summary:
      `tracing on: OTLP ${settings.protocol} to ${options.exporter ? "a test exporter" : settings.url}, ` +
      `sampler ${settings.sampler}${ratio}${settings.capturesContent ? ", message content captured" : ""}`,
    warnings,
  };
}

class RecordingTracing implements Tracing {
  /** The span whose ids the log lines written now carry (per request, or per poll). */
  private readonly logSpan = new AsyncLocalStorage<Span>();
  /** The span upstream calls made now go under (an answer's, or a poll's). */
  private readonly callParent = new AsyncLocalStorage<Span>();
  private readonly ids = new SpanIds();

  constructor(
    private readonly sink: SpanExportSink,
    private readonly sampled: SpanSampling,
    readonly capturesContent: boolean,
  ) {}

  get droppedSpans(): DroppedSpans {
    return this.sink.dropped;
  }

  startServerSpan(request: IncomingMessage): Span {
    const { traceparent, tracestate } = request.headers;
    const header = Array.isArray(traceparent) ? traceparent[0] : traceparent;
    const parent = header === undefined ? undefined : remoteParent(header, Array.isArray(tracestate) ? tracestate.join(",") : tracestate);
    return this.start(request.method ?? "HTTP", SERVER, parent, undefined);
  }

  startSpan(name: string, start: SpanStart, parent?: Span | string): Span {
    if (parent === undefined) return this.start(name, start, undefined, undefined);
    if (typeof parent === "string") return this.start(name, start, remoteParent(parent, undefined), undefined);
    const clock = parent instanceof RecordedSpan ? parent.clock : undefined;
    return this.start(name, start, parent.spanContext(), clock);
  }

  withParentSpan<T>(span: Span, work: () => T): T {
    return this.callParent.run(span, work);
  }

  parentSpan(): Span | undefined {
    return this.callParent.getStore();
  }

  withLogSpan<T>(span: Span, work: () => T): T {
    return this.logSpan.run(span, work);
  }

  withoutLogSpan<T>(work: () => T): T {
    return this.logSpan.exit(() => this.callParent.exit(work));
  }

  logFields(): Record<string, string> {
    const span = this.logSpan.getStore();
    return span ? logFieldsOf(span) : {};
  }

  flush(): Promise<void> {
    return this.sink.flush();
  }

  shutdown(): Promise<void> {
    return this.sink.shutdown();
  }

  /**
   * A span under `parent` (a new trace without one), as the sampler decides: recorded on the
   * parent's clock when it is a local recorded span, or carrying only its context when dropped
   * (its attributes then never built, when given as a function).
   */
  private start(name: string, start: SpanStart, parent: SpanContext | undefined, clock: TraceClock | undefined): Span {
    const { kind, attributes, links } = start;
    const traceId = parent === undefined ? this.ids.traceId() : parent.traceId;
    const spanId = this.ids.spanId();
    const traceState = parent?.traceState;
    const given = typeof attributes === "function" ? NOT_BUILT : (attributes ?? {});
    if (!this.sampled(traceId, name, kind, given, links ?? [], parent)) {
      return new UnsampledSpan(traceState ? { traceId, spanId, traceFlags: 0, traceState } : { traceId, spanId, traceFlags: 0 });
    }
    return new RecordedSpan(
      this.sink,
      name,
      kind,
      traceState ? { traceId, spanId, traceFlags: 1, traceState } : { traceId, spanId, traceFlags: 1 },
      parent ? { spanId: parent.spanId, isRemote: parent.isRemote === true } : undefined,
      clock ?? clockNow(),
      typeof attributes === "function" ? attributes() : given,
      links,
    );
  }
}

/** How a server span starts: its attributes are facts (`withFacts`). */
const SERVER: SpanStart = { kind: KIND.server };

/** What the sampler is shown of attributes not built yet (none of the samplers reads them). */
const NOT_BUILT: Attributes = Object.freeze({});

/** The context a W3C `traceparent` (and `tracestate`) names, as the SDK's propagator reads them; none when malformed. */
function remoteParent(traceparent: string, tracestate: string | undefined): SpanContext | undefined {
  const context = parseTraceParent(traceparent);
  if (!context) return undefined;
  return { ...context, isRemote: true, ...(tracestate ? { traceState: new TraceState(tracestate) } : {}) };
}

/** The resource of every span: the SDK's defaults, the adapter's identity, then `OTEL_RESOURCE_ATTRIBUTES` and `OTEL_SERVICE_NAME`. */
function resourceAttributes(settings: TracingSettings, serviceVersion: string): Attributes {
  return defaultResource()
    .merge(
      resourceFromAttributes({
        "service.name": SCOPE,
        "service.version": serviceVersion,
        "service.instance.id": randomUUID(),
        "host.name": hostname(),
        "process.pid": process.pid,
      }),
    )
    .merge(resourceFromAttributes(settings.resource)).attributes;
}

/**
 * The export worker's module: beside this one once compiled; run from the TypeScript sources
 * (the tests), the compiled one in dist/ (the test set-up builds it first).
 */
function exportWorkerUrl(): URL {
  return import.meta.url.endsWith(".ts") ? new URL("../../dist/src/telemetry/export-worker.js", import.meta.url) : new URL("./export-worker.js", import.meta.url);
}
