import { getStringFromEnv } from "@opentelemetry/core";
import { defaultResource, type Resource, resourceFromAttributes } from "@opentelemetry/resources";

// What everything the adapter exports over OTLP itself shares (its spans, and the audit trail's
// log records, docs/governance.md#the-audit-trail): who it is, and the protocol asked for.

/** The instrumentation scope, and the default `service.name`, of what the adapter exports. */
export const SCOPE = "workspace-openai-adapter";

/** The OTLP protocols (`OTEL_EXPORTER_OTLP_PROTOCOL`). */
export type OtlpProtocol = "http/protobuf" | "http/json" | "grpc";

/**
 * The protocol a signal is exported with: `OTEL_EXPORTER_OTLP_{signal}_PROTOCOL`, else
 * `OTEL_EXPORTER_OTLP_PROTOCOL`, else `fallback`; a value that is no OTLP protocol is warned about
 * and replaced by the fallback, as the specification says.
 */
export function otlpProtocol(signal: "TRACES" | "LOGS", fallback: OtlpProtocol, warn: (message: string) => void): OtlpProtocol {
  const variable = `OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`;
  const specific = getStringFromEnv(variable);
  const named = specific ?? getStringFromEnv("OTEL_EXPORTER_OTLP_PROTOCOL") ?? fallback;
  if (named === "http/protobuf" || named === "http/json" || named === "grpc") return named;
  warn(`${specific === undefined ? "OTEL_EXPORTER_OTLP_PROTOCOL" : variable}=${named} is not an OTLP protocol (http/protobuf, http/json, grpc); using ${fallback}`);
  return fallback;
}

/**
 * The lowest layer of the resource of what the adapter exports: the SDK's defaults, then the
 * adapter's name and version. Detectors and the environment (`OTEL_SERVICE_NAME`,
 * `OTEL_RESOURCE_ATTRIBUTES`) go over it.
 */
export function adapterResource(serviceVersion: string): Resource {
  return defaultResource().merge(resourceFromAttributes({ "service.name": SCOPE, "service.version": serviceVersion }));
}
