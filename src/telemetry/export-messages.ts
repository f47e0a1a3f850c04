import type { Attributes } from "@opentelemetry/api";
import type { BatchSettings } from "./export-settings.js";
import type { Scope } from "./otlp-request.js";
import type { SpanRingMemory } from "./span-ring.js";
import type { OtlpProtocol } from "./tracing-settings.js";

// What the event loop and the export worker (export-worker.ts) tell each other beside the ring of
// encoded spans they share (span-ring.ts): plain, structured-clone-able records, one per flush and
// one per batch sent.

/** What the export worker starts with (its `workerData`). */
export interface ExportWorkerData {
  protocol: OtlpProtocol;
  /** Where spans are sent, and the headers sent with them; the exporter reads the other `OTEL_EXPORTER_OTLP_*` variables itself. */
  url: string;
  headers: Record<string, string>;
  resource: Attributes;
  scope: Scope;
  batch: BatchSettings;
  /** The ring of encoded spans the event loop writes. */
  ring: SpanRingMemory;
}

/** To the worker: send everything written so far, and say so. */
export interface ToExportWorker {
  kind: "flush";
  id: number;
}

/** From the worker: spans it is done with (sent, or lost with the error that lost them), or a flush done. */
export type FromExportWorker =
  | { kind: "exported"; spans: number; error?: string }
  | { kind: "flushed"; id: number };
