import type { AuditRecord } from "./audit-record.js";

/**
 * Where audit records go (docs/governance.md#the-audit-trail), whatever the sink: said once here,
 * so that the OTLP sink (loaded on demand by `openAuditSink`) and the module that loads it do not
 * import each other. `write` never throws; it says whether the sink took the record.
 */
export interface AuditSink {
  write(record: AuditRecord): boolean;
  /** Writes out what is buffered and closes. */
  close(): Promise<void>;
}
