import { propagation, trace } from "@opentelemetry/api";
import { getStringFromEnv } from "@opentelemetry/core";
import { NodeSDK } from "@opentelemetry/sdk-node";
import { exportPipeline } from "./export-pipeline.js";
import { contentNote, tracingOver } from "./otel-tracing.js";
import { adapterResource, SCOPE } from "./otlp-conventions.js";
import type { TracingOptions } from "./start-tracing.js";
import type { TracingStart } from "./tracing.js";

/**
 * Tracing on a provider of the adapter's own, set up by the SDK's `NodeSDK` from the standard
 * variables (docs/observability.md#tracing): the sampler (`OTEL_TRACES_SAMPLER`), span limits,
 * propagators (`OTEL_PROPAGATORS`), resource detectors (`OTEL_NODE_RESOURCE_DETECTORS`,
 * `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_SERVICE_NAME`) and the async-local-storage context manager,
 * all registered for the process; the span processor and exporter are the adapter's export
 * pipeline (export-pipeline.ts), which counts what it loses. Nothing else: no metrics, logs or
 * instrumentations.
 */
export function ownTracing(options: TracingOptions, capturesContent: boolean): TracingStart {
  const pipeline = exportPipeline(options.onExportError ?? (() => undefined));
  const exporterName = getStringFromEnv("OTEL_TRACES_EXPORTER");
  if (exporterName !== undefined && exporterName !== "otlp") pipeline.warnings.push(`OTEL_TRACES_EXPORTER=${exporterName} is not built in; exporting with OTLP`);
  const sdk = new NodeSDK({
    // The lowest layer of the resource: NodeSDK's detectors and the environment (OTEL_SERVICE_NAME…) go over it.
    resource: adapterResource(options.serviceVersion),
    spanProcessors: [pipeline.processor],
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
  });
  sdk.start();
  const { processor, protocol } = pipeline;
  const tracing = tracingOver({
    tracer: trace.getTracer(SCOPE, options.serviceVersion),
    propagator: propagation,
    capturesContent,
    // The provider's sampler is one OTEL_TRACES_SAMPLER names (NodeSDK builds no other): each decides by trace.
    dropsWholeTraces: true,
    dropped: () => pipeline.dropped,
    flush: () => processor.forceFlush(),
    shutdown: () => sdk.shutdown(),
  });
  const endpoint = getStringFromEnv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") ?? getStringFromEnv("OTEL_EXPORTER_OTLP_ENDPOINT");
  const sampler = getStringFromEnv("OTEL_TRACES_SAMPLER") ?? "parentbased_always_on";
  const ratio = sampler.endsWith("traceidratio") ? ` ${getStringFromEnv("OTEL_TRACES_SAMPLER_ARG") ?? "1.0"}` : "";
  return {
    tracing,
    summary: `tracing on: OTLP ${protocol} to ${endpoint ?? "the default endpoint"}, sampler ${sampler}${ratio}${contentNote(capturesContent)}`,
    warnings: pipeline.warnings,
  };
}

