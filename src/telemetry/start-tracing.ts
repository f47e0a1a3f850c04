import type { SpanExporter } from "@opentelemetry/sdk-trace";
import { type Environment, tracingRequested } from "./tracing-environment.js";
import type { Tracing } from "./tracing.js";

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
   * Told when exports fail (the collector is down or refuses the spans), for the caller to log:
   * the first failure, then at most one line a minute with how many failed meanwhile, and once
   * when exports succeed again.
   */
  onExportError?: (message: string) => void;
  /** Replaces the OTLP exporter (tests read spans from memory with the SDK's InMemorySpanExporter). */
  exporter?: SpanExporter;
}

/**
 * Starts tracing when the standard `OTEL_*` variables ask for it (docs/observability.md). Off,
 * nothing of OpenTelemetry is loaded: the SDK and the exporter are imported here, on demand.
 * Throws `TracingSettingsError` for settings tracing cannot work with (an endpoint that is no
 * URL, the gRPC protocol).
 */
export async function startTracing(env: Environment, options: TracingOptions): Promise<TracingStart> {
  if (!tracingRequested(env)) return { tracing: undefined, summary: "tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT)", warnings: [] };
  const { createOtelTracing } = await import("./otel-tracing.js");
  return createOtelTracing(env, options);
}
