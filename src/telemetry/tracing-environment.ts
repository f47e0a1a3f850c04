// The standard variables that decide whether tracing starts at all: read without loading any
// OpenTelemetry package, so that with tracing off none is loaded (their table: config/tracing-settings.ts).

/** The environment, as `process.env` holds it. */
export type Environment = Record<string, string | undefined>;

/** A variable's value, or undefined when unset or empty (the specification treats empty as unset). */
export function variable(env: Environment, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

/** A boolean variable: only `true` (any case) is true. */
export function isTrue(env: Environment, name: string): boolean {
  return variable(env, name)?.toLowerCase() === "true";
}

/**
 * Whether the standard variables turn tracing on: an OTLP endpoint is set (`OTEL_EXPORTER_OTLP_ENDPOINT`
 * or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), `OTEL_SDK_DISABLED` is not true and
 * `OTEL_TRACES_EXPORTER` is not `none`.
 */
export function tracingRequested(env: Environment): boolean {
  if (isTrue(env, "OTEL_SDK_DISABLED")) return false;
  if (variable(env, "OTEL_TRACES_EXPORTER")?.toLowerCase() === "none") return false;
  return variable(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") !== undefined || variable(env, "OTEL_EXPORTER_OTLP_ENDPOINT") !== undefined;
}


/** A setting tracing cannot work with at all (an endpoint that is no URL): start-up stops. */
export class TracingSettingsError extends Error {}

/**
 * Throws `TracingSettingsError` for an OTLP endpoint that is no http(s) URL: the SDK's exporters
 * would only warn, on a diagnostic channel nobody reads, and send to `localhost` instead.
 */
export function checkEndpoints(env: Environment): void {
  for (const name of ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]) {
    const value = variable(env, name);
    if (value === undefined) continue;
    let protocol: string | undefined;
    try {
      protocol = new URL(value).protocol;
    } catch {
      protocol = undefined;
    }
    if (protocol !== "http:" && protocol !== "https:") throw new TracingSettingsError(`${name} must be an http:// or https:// URL (got ${JSON.stringify(value)})`);
  }
}
