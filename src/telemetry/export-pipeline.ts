import { createNoopMeter, type Meter, type MeterProvider } from "@opentelemetry/api";
import { type ExportResult, ExportResultCode, getNumberFromEnv } from "@opentelemetry/core";
import { OTLPTraceExporter as GrpcExporter } from "@opentelemetry/exporter-trace-otlp-grpc";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtobufExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { BatchSpanProcessor, type ReadableSpan, type SpanExporter } from "@opentelemetry/sdk-trace";
import { exportFailures, queueFullReports } from "./export-reports.js";
import { type OtlpProtocol, otlpProtocol } from "./otlp-conventions.js";
import type { DropReason, DroppedSpans } from "./tracing.js";

/** How the adapter's spans leave, as the environment asks: the SDK's batch processor and OTLP exporter, with what they lost counted. */
export interface ExportPipeline {
  readonly processor: BatchSpanProcessor;
  readonly protocol: OtlpProtocol;
  /** Spans lost so far, by reason (`adapter_trace_spans_dropped_total`). */
  readonly dropped: DroppedSpans;
  /** Settings ignored, as the specification asks (warn, and use the default). */
  readonly warnings: string[];
}

/** The batch processor's self-observability counter (semantic conventions, OTel SDK metrics) and its `error.type` for a span the full queue refused. */
const PROCESSED = "otel.sdk.processor.span.processed";
const QUEUE_FULL = "queue_full";

/**
 * The export of the adapter's own tracer provider (docs/observability.md#how-spans-leave): the
 * SDK's `BatchSpanProcessor` over the OTLP exporter of the protocol `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`
 * or `OTEL_EXPORTER_OTLP_PROTOCOL` names (http/protobuf by default) (each exporter reads its endpoint, headers, timeout,
 * compression and certificates from the environment itself). The adapter builds the processor
 * rather than let `NodeSDK` build it only to count what it loses: spans the full queue refused,
 * through the processor's self-observability meter (which `NodeSDK` passes only under
 * `OTEL_NODE_EXPERIMENTAL_SDK_METRICS`, with per-span counters besides), and spans of failed
 * exports, through the exporter; so it reads the four `OTEL_BSP_*` numbers itself, with the SDK's
 * own reader.
 */
export function exportPipeline(report: (message: string) => void): ExportPipeline {
  const warnings: string[] = [];
  const lost: Record<DropReason, number> = { queue_full: 0, export_failed: 0 };
  const protocol = otlpProtocol("TRACES", "http/protobuf", (warning) => warnings.push(warning));
  const exporter = new ReportingExporter(exporterOf(protocol), lost, exportFailures(report));
  const maxQueueSize = nonNegative("OTEL_BSP_MAX_QUEUE_SIZE");
  const queueFull = queueFullReports(report, `OTEL_BSP_MAX_QUEUE_SIZE=${maxQueueSize ?? 2048} spans wait at most`);
  const processor = new BatchSpanProcessor({
    exporter,
    maxQueueSize,
    maxExportBatchSize: nonNegative("OTEL_BSP_MAX_EXPORT_BATCH_SIZE"),
    scheduledDelayMillis: nonNegative("OTEL_BSP_SCHEDULE_DELAY"),
    exportTimeoutMillis: nonNegative("OTEL_BSP_EXPORT_TIMEOUT"),
    selfObsMeterProvider: countingRefused((count) => {
      lost.queue_full += count;
      queueFull(lost.queue_full);
    }),
  });
  return { processor, protocol, dropped: lost, warnings };
}

function exporterOf(protocol: OtlpProtocol): SpanExporter {
  if (protocol === "grpc") return new GrpcExporter();
  return protocol === "http/json" ? new JsonExporter() : new ProtobufExporter();
}

/** A whole number from the environment, as `NodeSDK` reads the `OTEL_BSP_*` ones (a negative one is ignored). */
function nonNegative(name: string): number | undefined {
  const value = getNumberFromEnv(name);
  return value !== undefined && value >= 0 ? value : undefined;
}

/** The exporter, its failed exports counted (`export_failed`) and reported. */
class ReportingExporter implements SpanExporter {
  constructor(
    private readonly exporter: SpanExporter,
    private readonly lost: Record<DropReason, number>,
    private readonly seen: (error: Error | undefined) => void,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.exporter.export(spans, (result) => {
      const failed = result.code !== ExportResultCode.SUCCESS;
      if (failed) this.lost.export_failed += spans.length;
      this.seen(failed ? (result.error ?? new Error("")) : undefined);
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.exporter.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.exporter.forceFlush?.() ?? Promise.resolve();
  }
}

/**
 * The meter provider the batch processor reports itself to: only spans the full queue refused are
 * counted (`otel.sdk.processor.span.processed` with `error.type=queue_full`); every other instrument
 * is the API's no-op.
 */
function countingRefused(onRefused: (count: number) => void): MeterProvider {
  const noop = createNoopMeter();
  const meter: Meter = Object.create(noop) as Meter;
  meter.createCounter = (name, options) => {
    if (name !== PROCESSED) return noop.createCounter(name, options);
    return {
      add(count, attributes) {
        if (attributes?.["error.type"] === QUEUE_FULL) onRefused(count);
      },
    };
  };
  return { getMeter: () => meter };
}
