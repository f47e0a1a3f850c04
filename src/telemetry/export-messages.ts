import type { Attributes } from "@opentelemetry/api";
import type { BatchSettings } from "./export-settings.js";
import type { Scope } from "./otlp-request.js";
import type { OtlpProtocol } from "./tracing-settings.js";

// What the event loop and the export worker (export-worker.ts) tell each other: plain,
// structured-clone-able records; chunks of encoded spans travel as transferred ArrayBuffers.

/** What the export worker starts with (its `workerData`). */
export interface ExportWorkerData {
  protocol: OtlpProtocol;
  /** Where spans are sent, and the headers sent with them; the exporter reads the other `OTEL_EXPORTER_OTLP_*` variables itself. */
  url: string;
  headers: Record<string, string>;
  resource: Attributes;
  scope: Scope;
  batch: BatchSettings;
}

/** To the worker: a chunk of encoded spans (its buffer is transferred), a flush, or the end. */
export type ToExportWorker =
  | { kind: "spans"; buffer: ArrayBuffer; length: number; spans: number }
  | { kind: "flush"; id: number };

/** From the worker: spans it is done with (sent, or lost with the error that lost them), or a flush done. */
export type FromExportWorker =
  | { kind: "exported"; spans: number; bytes: number; error?: string }
  | { kind: "flushed"; id: number };
