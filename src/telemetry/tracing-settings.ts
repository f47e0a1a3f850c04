import { parseKeyPairsIntoRecord } from "@opentelemetry/core";
import { type Environment, isTrue, TracingSettingsError, variable } from "./tracing-environment.js";

/** The trace samplers of the specification this adapter builds (`OTEL_TRACES_SAMPLER`). */
export type SamplerName =
  | "always_on"
  | "always_off"
  | "traceidratio"
  | "parentbased_always_on"
  | "parentbased_always_off"
  | "parentbased_traceidratio";

/** The OTLP/HTTP encodings (`OTEL_EXPORTER_OTLP_PROTOCOL`); gRPC is not built in. */
export type OtlpProtocol = "http/protobuf" | "http/json";

/** What the standard variables ask of tracing, read once at start-up. */
export interface TracingSettings {
  /** Where spans are sent: the traces endpoint, or the base endpoint with `v1/traces` appended. */
  url: string;
  protocol: OtlpProtocol;
  /** `OTEL_EXPORTER_OTLP_HEADERS` with `OTEL_EXPORTER_OTLP_TRACES_HEADERS` over it. */
  headers: Record<string, string>;
  sampler: SamplerName;
  /** The ratio of the `traceidratio` samplers. */
  ratio: number;
  /** `OTEL_RESOURCE_ATTRIBUTES`, with `OTEL_SERVICE_NAME` as `service.name` when set. */
  resource: Record<string, string>;
  capturesContent: boolean;
  /** Values that were ignored (the specification's rule: warn and use the default). */
  warnings: string[];
}

const SAMPLERS = new Set<string>([
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
]);

/**
 * Reads the standard variables as the OpenTelemetry specification says (SDK environment variables,
 * OTLP exporter configuration): a signal-specific endpoint is used as it is, the base endpoint
 * gets `v1/traces` appended; signal-specific headers and protocol win over the general ones;
 * `http/protobuf` by default; unknown samplers and ratios outside [0, 1] are warned about and
 * replaced by the defaults. Only called when `tracingRequested`.
 */
export function readTracingSettings(env: Environment): TracingSettings {
  const warnings: string[] = [];
  const exporter = variable(env, "OTEL_TRACES_EXPORTER")?.toLowerCase();
  if (exporter !== undefined && exporter !== "otlp") warnings.push(`OTEL_TRACES_EXPORTER=${exporter} is not built in; exporting with OTLP`);
  return {
    url: endpointOf(env),
    protocol: protocolOf(env),
    headers: {
      ...parseKeyPairsIntoRecord(variable(env, "OTEL_EXPORTER_OTLP_HEADERS")),
      ...parseKeyPairsIntoRecord(variable(env, "OTEL_EXPORTER_OTLP_TRACES_HEADERS")),
    },
    ...samplerOf(env, warnings),
    resource: resourceOf(env),
    capturesContent: isTrue(env, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"),
    warnings,
  };
}

function endpointOf(env: Environment): string {
  const specific = variable(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  const base = variable(env, "OTEL_EXPORTER_OTLP_ENDPOINT");
  const name = specific !== undefined ? "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" : "OTEL_EXPORTER_OTLP_ENDPOINT";
  const raw = specific ?? `${(base ?? "").replace(/\/$/, "")}/v1/traces`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TracingSettingsError(`${name} must be an http:// or https:// URL (got ${JSON.stringify(specific ?? base)})`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TracingSettingsError(`${name} must be an http:// or https:// URL (got ${JSON.stringify(specific ?? base)})`);
  }
  return url.toString();
}

function protocolOf(env: Environment): OtlpProtocol {
  const specific = variable(env, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL");
  const name = specific !== undefined ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL" : "OTEL_EXPORTER_OTLP_PROTOCOL";
  const value = specific ?? variable(env, "OTEL_EXPORTER_OTLP_PROTOCOL") ?? "http/protobuf";
  if (value === "http/protobuf" || value === "http/json") return value;
  const hint = value === "grpc" ? ": gRPC is not built in; send to the collector's OTLP/HTTP port (4318) with http/protobuf" : "";
  throw new TracingSettingsError(`${name}=${value} is not supported (use http/protobuf or http/json)${hint}`);
}

function samplerOf(env: Environment, warnings: string[]): { sampler: SamplerName; ratio: number } {
  const named = variable(env, "OTEL_TRACES_SAMPLER")?.toLowerCase();
  let sampler: SamplerName = "parentbased_always_on";
  if (named !== undefined && SAMPLERS.has(named)) sampler = named as SamplerName;
  else if (named !== undefined) warnings.push(`OTEL_TRACES_SAMPLER=${named} is not built in; using parentbased_always_on`);
  const argument = variable(env, "OTEL_TRACES_SAMPLER_ARG");
  let ratio = 1;
  if (sampler.endsWith("traceidratio") && argument !== undefined) {
    const value = Number(argument);
    if (Number.isFinite(value) && value >= 0 && value <= 1) ratio = value;
    else warnings.push(`OTEL_TRACES_SAMPLER_ARG=${argument} is not a ratio from 0 to 1; using 1.0`);
  }
  return { sampler, ratio };
}

function resourceOf(env: Environment): Record<string, string> {
  const attributes = parseKeyPairsIntoRecord(variable(env, "OTEL_RESOURCE_ATTRIBUTES"));
  const serviceName = variable(env, "OTEL_SERVICE_NAME");
  return serviceName === undefined ? attributes : { ...attributes, "service.name": serviceName };
}
