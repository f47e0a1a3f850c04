import type { Attributes, HrTime } from "@opentelemetry/api";
import { type ExportResult, ExportResultCode } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, type ReadableSpan, type SpanExporter } from "@opentelemetry/sdk-trace";
import type { BatchSettings } from "./export-settings.js";
import { exportFailures } from "./export-reports.js";
import type { Scope } from "./otlp-request.js";
import { allAttributes, epochTime, type FinishedSpan, type SpanSink } from "./recorded-span.js";
import type { DropReason, DroppedSpans } from "./tracing.js";

/**
 * Ended spans handed, as the SDK's ReadableSpans, to an SDK exporter on the event loop through
 * the SDK's batch span processor: what `TracingOptions.exporter` asks for (tests read spans from
 * the SDK's InMemorySpanExporter). The adapter itself exports through the worker (`SpanHandoff`).
 */
export class InProcessExport implements SpanSink {
  private readonly processor: BatchSpanProcessor;
  private readonly resource;
  private readonly lost: Record<DropReason, number> = { queue_full: 0, export_failed: 0, worker_stopped: 0 };

  constructor(
    exporter: SpanExporter,
    resource: Attributes,
    private readonly scope: Scope,
    batch: BatchSettings,
    report: (message: string) => void,
  ) {
    this.resource = resourceFromAttributes(resource);
    const seen = exportFailures(report);
    const reporting: SpanExporter = {
      export: (spans, done) =>
        exporter.export(spans, (result: ExportResult) => {
          if (result.code !== ExportResultCode.SUCCESS) this.lost.export_failed += spans.length;
          seen(result.code === ExportResultCode.SUCCESS ? undefined : (result.error ?? new Error("")));
          done(result);
        }),
      shutdown: () => exporter.shutdown(),
      forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
    };
    this.processor = new BatchSpanProcessor({ exporter: reporting, ...batch });
  }

  get dropped(): DroppedSpans {
    return this.lost;
  }

  ended(span: FinishedSpan): void {
    this.processor.onEnd(readableSpan(span, this.resource, this.scope));
  }

  // A failed export is reported, never thrown at the caller.
  flush(): Promise<void> {
    return this.processor.forceFlush().catch(() => undefined);
  }

  shutdown(): Promise<void> {
    return this.processor.shutdown().catch(() => undefined);
  }
}

/** A finished span as the SDK's ReadableSpan (what SDK exporters and serializers take). */
export function readableSpan(span: FinishedSpan, resource: ReadableSpan["resource"], scope: Scope): ReadableSpan {
  const time = (at: number): HrTime => epochTime(span.clock, at);
  const { parent } = span;
  const startTime = time(span.startTime);
  const endTime = time(span.endTime);
  const nanos = (endTime[0] - startTime[0]) * 1e9 + endTime[1] - startTime[1];
  return {
    name: span.name,
    kind: span.kind,
    spanContext: () => span.context,
    ...(parent ? { parentSpanContext: { ...span.context, spanId: parent.spanId, isRemote: parent.isRemote } } : {}),
    startTime,
    endTime,
    status: span.statusMessage === undefined ? { code: span.statusCode } : { code: span.statusCode, message: span.statusMessage },
    attributes: Object.fromEntries(Object.entries(allAttributes(span)).filter(([, value]) => value !== undefined)),
    links: [...span.links],
    events: span.events.map((event) => ({ name: event.name, time: time(event.time), attributes: event.attributes ?? {} })),
    duration: [Math.floor(nanos / 1e9), nanos % 1e9],
    ended: true,
    resource,
    instrumentationScope: scope,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}
