import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { hostname } from "node:os";
import { type Attributes, type Context, defaultTextMapGetter, ROOT_CONTEXT, type Span, trace, type Tracer } from "@opentelemetry/api";
import { type ExportResult, ExportResultCode, W3CTraceContextPropagator } from "@opentelemetry/core";
import { defaultResource, resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  TracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  type ReadableSpan,
  type Sampler,
  type SpanExporter,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace";
import type { TracingOptions, TracingStart } from "./start-tracing.js";
import type { Environment } from "./tracing-environment.js";
import { readTracingSettings, type TracingSettings } from "./tracing-settings.js";
import { KIND, logFieldsOf, type SpanStart, type Tracing } from "./tracing.js";

/** The instrumentation scope every span of the adapter carries. */
const SCOPE = "workspace-openai-adapter";

/**
 * Builds tracing on the OpenTelemetry SDK for Node (loaded only when tracing is on): a tracer
 * provider of its own (not registered globally), the sampler and resource the variables name,
 * a batch span processor and the OTLP/HTTP exporter of the protocol asked for.
 */
export async function createOtelTracing(env: Environment, options: TracingOptions): Promise<TracingStart> {
  const settings = readTracingSettings(env);
  const exporter = options.exporter ?? (await otlpExporter(settings));
  const provider = new TracerProvider({
    resource: defaultResource()
      .merge(
        resourceFromAttributes({
          "service.name": SCOPE,
          "service.version": options.serviceVersion,
          "service.instance.id": randomUUID(),
          "host.name": hostname(),
          "process.pid": process.pid,
        }),
      )
      .merge(resourceFromAttributes(settings.resource)),
    sampler: samplerOf(settings),
    spanProcessors: [new BatchSpanProcessor({ exporter: reporting(exporter, options.onExportError) })],
  });
  const ratio = settings.sampler.endsWith("traceidratio") ? ` ${settings.ratio}` : "";
  return {
    tracing: new OtelTracing(provider, provider.getTracer(SCOPE, options.serviceVersion), settings.capturesContent),
    summary:
      `tracing on: OTLP ${settings.protocol} to ${options.exporter ? "a test exporter" : settings.url}, ` +
      `sampler ${settings.sampler}${ratio}${settings.capturesContent ? ", message content captured" : ""}`,
    warnings: settings.warnings,
  };
}

class OtelTracing implements Tracing {
  /** The span whose ids the log lines written now carry (per request, or per poll). */
  private readonly logSpan = new AsyncLocalStorage<Span>();
  /** The span upstream calls made now go under (an answer's, or a poll's). */
  private readonly callParent = new AsyncLocalStorage<Span>();
  private readonly propagator = new W3CTraceContextPropagator();

  constructor(
    private readonly provider: TracerProvider,
    private readonly tracer: Tracer,
    readonly capturesContent: boolean,
  ) {}

  startServerSpan(request: IncomingMessage, attributes: Attributes): Span {
    const { headers } = request;
    const traced = headers.traceparent !== undefined;
    const parent = traced ? this.propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter) : ROOT_CONTEXT;
    return this.tracer.startSpan(request.method ?? "HTTP", { kind: KIND.server, attributes }, parent);
  }

  startSpan(name: string, start: SpanStart, parent?: Span | string): Span {
    return this.tracer.startSpan(name, { ...start, root: parent === undefined }, this.contextOf(parent));
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

  // A failed export is reported (`onExportError`), never thrown at the caller.
  flush(): Promise<void> {
    return this.provider.forceFlush().catch(() => undefined);
  }

  shutdown(): Promise<void> {
    return this.provider.shutdown().catch(() => undefined);
  }

  private contextOf(parent: Span | string | undefined): Context {
    if (parent === undefined) return ROOT_CONTEXT;
    if (typeof parent !== "string") return trace.setSpan(ROOT_CONTEXT, parent);
    return this.propagator.extract(ROOT_CONTEXT, { traceparent: parent }, defaultTextMapGetter);
  }
}

/** The sampler `OTEL_TRACES_SAMPLER` names (parent-based, always on, by default). */
function samplerOf(settings: TracingSettings): Sampler {
  const ratio = new TraceIdRatioBasedSampler(settings.ratio);
  switch (settings.sampler) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return ratio;
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: ratio });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/**
 * The OTLP/HTTP exporter of the protocol asked for, with the URL and headers read from the
 * variables (the exporter itself still reads the variables the adapter does not: timeout,
 * compression, certificates).
 */
async function otlpExporter(settings: TracingSettings): Promise<SpanExporter> {
  const config = { url: settings.url, headers: settings.headers };
  if (settings.protocol === "http/json") {
    const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
    return new OTLPTraceExporter(config);
  }
  const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-proto");
  return new OTLPTraceExporter(config);
}

/**
 * The exporter, reporting failed exports (the SDK alone would stay silent without a global
 * diagnostic logger): the first failure, then at most one report a minute with how many failed
 * meanwhile, and the recovery.
 */
function reporting(exporter: SpanExporter, report: ((message: string) => void) | undefined): SpanExporter {
  if (!report) return exporter;
  let failures = 0;
  let reportedAt = Number.NEGATIVE_INFINITY;
  const seen = (result: ExportResult) => {
    if (result.code === ExportResultCode.SUCCESS) {
      if (failures > 0) report(`trace export works again (${failures} batch${failures === 1 ? "" : "es"} of spans lost)`);
      failures = 0;
      reportedAt = Number.NEGATIVE_INFINITY;
      return;
    }
    failures += 1;
    if (performance.now() - reportedAt < 60_000) return;
    reportedAt = performance.now();
    report(`trace export failed, spans are lost (${failures} batch${failures === 1 ? "" : "es"} so far): ${result.error?.message ?? "no reason given"}`);
  };
  return {
    export(spans: ReadableSpan[], done: (result: ExportResult) => void) {
      exporter.export(spans, (result) => {
        seen(result);
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}
