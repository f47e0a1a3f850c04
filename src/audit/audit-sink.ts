import { createWriteStream, openSync } from "node:fs";
import type { Writable } from "node:stream";
import type { AuditSink as AuditSinkSetting } from "../config/config.js";
import type { AuditRecord } from "./audit-record.js";
import type { AuditSink } from "./sink.js";
import { errorMessage } from "../util/error-message.js";

/** What a sink reports to: its version (OTLP's resource), and where write errors go. */
interface SinkOptions {
  serviceVersion: string;
  onError: (message: string) => void;
}

/** The most a sink may hold unwritten before records are dropped (and counted), rather than memory grow without bound. */
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;
/** Records kept while the OTLP exporter loads (the first moments after start-up). */
const MAX_EARLY_RECORDS = 10_000;

/**
 * The sink `AUDIT_LOG` names: one JSON line per record to stdout, or appended to a file (opened
 * at once, owner-readable only, so that a path it cannot write stops start-up), or an
 * OpenTelemetry log record to the OTLP endpoint of the standard `OTEL_EXPORTER_OTLP_*` variables
 * (its exporter loaded only then). A sink that cannot keep up drops records past a bound, never
 * holds an answer; the caller counts them.
 */
export function openAuditSink(setting: AuditSinkSetting, options: SinkOptions): AuditSink {
  if (setting.kind === "otlp") return earlyOtlp(options);
  const stream: Writable = setting.kind === "stdout" ? process.stdout : createWriteStream("", { fd: openSync(setting.path, "a", 0o600) });
  if (setting.kind === "file") stream.on("error", (error) => options.onError(error.message));
  return {
    write(record) {
      if (stream.writableLength > MAX_BUFFERED_BYTES) return false;
      stream.write(`${JSON.stringify(record)}\n`);
      return true;
    },
    async close() {
      if (setting.kind === "file") await new Promise<void>((resolve) => stream.end(resolve));
    },
  };
}

/** The OTLP sink, taking records at once while its exporter loads. */
function earlyOtlp(options: SinkOptions): AuditSink {
  let sink: AuditSink | undefined;
  const early: AuditRecord[] = [];
  const loading = import("./otlp-audit-sink.js").then(({ otlpAuditSink }) => {
    sink = otlpAuditSink(options);
    for (const record of early.splice(0)) sink.write(record);
  });
  loading.catch((error: unknown) => options.onError(`the OTLP audit exporter could not be loaded: ${errorMessage(error)}`));
  return {
    write(record) {
      if (sink) return sink.write(record);
      if (early.length >= MAX_EARLY_RECORDS) return false;
      early.push(record);
      return true;
    },
    async close() {
      await loading.catch(() => undefined);
      await sink?.close();
    },
  };
}
