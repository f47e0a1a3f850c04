import { OTLPLogExporter as GrpcLogExporter } from "@opentelemetry/exporter-logs-otlp-grpc";
import { OTLPLogExporter as JsonLogExporter } from "@opentelemetry/exporter-logs-otlp-http";
import { OTLPLogExporter as ProtobufLogExporter } from "@opentelemetry/exporter-logs-otlp-proto";
import { detectResources, envDetector, hostDetector, osDetector, processDetector, serviceInstanceIdDetector } from "@opentelemetry/resources";
import { BatchLogRecordProcessor, type LogRecordExporter, LoggerProvider } from "@opentelemetry/sdk-logs";
import { adapterResource, type OtlpProtocol, otlpProtocol, SCOPE } from "../telemetry/otlp-conventions.js";
import type { AuditRecord } from "./audit-record.js";
import type { AuditSink } from "./sink.js";
import { errorMessage } from "../util/error-message.js";

/** OpenTelemetry's severity number of INFO. */
const INFO = 9;

/**
 * Audit records as OpenTelemetry log records (`AUDIT_LOG=otlp`), exported in batches over OTLP to
 * the endpoint of `OTEL_EXPORTER_OTLP_LOGS_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT` (the exporter
 * reads the standard variables: headers, timeout, compression), off the serving loop, as the
 * adapter's spans are (otlp-conventions.ts): in the protocol `OTEL_EXPORTER_OTLP_LOGS_PROTOCOL` or
 * `OTEL_EXPORTER_OTLP_PROTOCOL` names (OTLP/HTTP JSON when neither does), under the resource its
 * spans have (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES` and the SDK's default detectors over
 * the adapter's name). Each record is one log record: event `adapter.audit`, its fields as
 * attributes, the whole record as the body.
 */
export function otlpAuditSink(options: { serviceVersion: string; onError: (message: string) => void }): AuditSink {
  const exporter = exporterOf(otlpProtocol("LOGS", "http/json", options.onError));
  // NodeSDK's default detectors, as the adapter's spans have them.
  const detectors = [serviceInstanceIdDetector, processDetector, hostDetector, osDetector, envDetector];
  const resource = adapterResource(options.serviceVersion).merge(detectResources({ detectors }));
  const provider = new LoggerProvider({ resource, processors: [new BatchLogRecordProcessor({ exporter })] });
  const logger = provider.getLogger(SCOPE, options.serviceVersion);
  return {
    write(record: AuditRecord) {
      const { tokens, query_ids: queryIds, answers, ...fields } = record;
      const attributes: Record<string, string | number | boolean | string[]> = { "adapter.audit.query_ids": queryIds };
      for (const [name, value] of Object.entries(fields)) if (value !== null && value !== undefined) attributes[`adapter.audit.${name}`] = value;
      if (tokens) Object.assign(attributes, { "adapter.audit.tokens.input": tokens.input, "adapter.audit.tokens.output": tokens.output, "adapter.audit.tokens.reasoning": tokens.reasoning });
      if (answers) attributes["adapter.audit.answers"] = answers;
      logger.emit({ eventName: "adapter.audit", severityNumber: INFO, severityText: "INFO", body: JSON.stringify(record), attributes, timestamp: Date.parse(record.time) });
      return true;
    },
    async close() {
      await provider.shutdown().catch((error: unknown) => options.onError(errorMessage(error)));
    },
  };
}

function exporterOf(protocol: OtlpProtocol): LogRecordExporter {
  if (protocol === "grpc") return new GrpcLogExporter();
  return protocol === "http/protobuf" ? new ProtobufLogExporter() : new JsonLogExporter();
}
