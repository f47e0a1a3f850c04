import { randomUUID } from "node:crypto";
import { OTLPLogExporter } from "@opentelemetry/exporter-logs-otlp-http";
import { defaultResource, resourceFromAttributes } from "@opentelemetry/resources";
import { BatchLogRecordProcessor, LoggerProvider } from "@opentelemetry/sdk-logs";
import type { AuditRecord } from "./audit-record.js";
import type { AuditSink } from "./sink.js";
import { errorMessage } from "../util/error-message.js";

/** The instrumentation scope and service of the audit records. */
const SCOPE = "workspace-openai-adapter";
/** OpenTelemetry's severity number of INFO. */
const INFO = 9;

/**
 * Audit records as OpenTelemetry log records (`AUDIT_LOG=otlp`), exported in batches over
 * OTLP/HTTP to the endpoint of `OTEL_EXPORTER_OTLP_LOGS_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT`
 * (the exporter reads the standard variables: headers, timeout, compression), off the serving
 * loop. Each record is one log record: event `adapter.audit`, its fields as attributes, the
 * whole record as the body.
 */
export function otlpAuditSink(options: { serviceVersion: string; onError: (message: string) => void }): AuditSink {
  const exporter = new OTLPLogExporter();
  const resource = defaultResource().merge(
    resourceFromAttributes({ "service.name": SCOPE, "service.version": options.serviceVersion, "service.instance.id": randomUUID() }),
  );
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
