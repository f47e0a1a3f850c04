import { type Environment, tracingRequested } from "./tracing-environment.js";
import type { TracingOptions, TracingStart } from "./tracing.js";

/**
 * Starts tracing when the standard `OTEL_*` variables ask for it (docs/observability.md). Off,
 * nothing of OpenTelemetry is loaded: the SDK's parts and the export worker are loaded here, on
 * demand. Throws `TracingSettingsError` for settings tracing cannot work with (an endpoint that
 * is no URL, the gRPC protocol).
 */
export async function startTracing(env: Environment, options: TracingOptions): Promise<TracingStart> {
  if (!tracingRequested(env)) return { tracing: undefined, summary: "tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT)", warnings: [] };
  const { createRecordingTracing } = await import("./recording-tracing.js");
  return createRecordingTracing(env, options);
}
