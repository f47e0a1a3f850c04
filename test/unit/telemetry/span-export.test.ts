import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { FromExportWorker } from "../../../src/telemetry/export-messages.js";
import { ExportRequests } from "../../../src/telemetry/otlp-request.js";
import { type BodyExporter, SpanExport } from "../../../src/telemetry/span-export.js";

// The export worker's batching (docs/observability.md#how-spans-leave), with a fake exporter and
// the clock faked: batches by size and by delay, one export at a time, flushes, the export timeout.

const BATCH = { maxQueueSize: 100, maxExportBatchSize: 4, scheduledDelayMillis: 5000, exportTimeoutMillis: 30000 };

/** An exporter that records each body's span count and answers only when told. */
function heldExporter() {
  const calls: { spans: number; done: (error?: Error) => void }[] = [];
  const exporter: BodyExporter = {
    export: (_body, spans, done) => void calls.push({ spans, done }),
    shutdown: () => Promise.resolve(),
  };
  return { exporter, calls };
}

/** A chunk of `spans` spans of `bytes` bytes (JSON: each chunk starts with a comma). */
function chunk(spans: number, bytes = 10) {
  const buffer = new ArrayBuffer(bytes);
  new Uint8Array(buffer).set(Buffer.from(`,${"x".repeat(bytes - 1)}`));
  return { kind: "spans", buffer, length: bytes, spans } as const;
}

describe("the export worker's batches", () => {
  let sent: FromExportWorker[];
  let held: ReturnType<typeof heldExporter>;
  let batches: SpanExport;
  beforeEach(() => {
    vi.useFakeTimers();
    sent = [];
    held = heldExporter();
    batches = new SpanExport(new ExportRequests("http/json", {}, { name: "s", version: "1" }), held.exporter, BATCH, (message) => sent.push(message));
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("leave once a batch's worth waits, one export at a time, each reported with its spans and bytes", () => {
    batches.receive(chunk(2));
    expect(held.calls).toEqual([]);
    batches.receive(chunk(2, 20));
    batches.receive(chunk(3));
    batches.receive(chunk(1));
    expect(held.calls.map((call) => call.spans)).toEqual([4]);
    held.calls[0]?.done();
    expect(sent).toEqual([{ kind: "exported", spans: 4, bytes: 30 }]);
    // Whole chunks up to a batch: 3 + 1.
    expect(held.calls.map((call) => call.spans)).toEqual([4, 4]);
    held.calls[1]?.done(new Error("refused"));
    expect(sent.at(-1)).toEqual({ kind: "exported", spans: 4, bytes: 20, error: "refused" });
  });

  it("leave after OTEL_BSP_SCHEDULE_DELAY when fewer wait", () => {
    batches.receive(chunk(1));
    vi.advanceTimersByTime(4999);
    expect(held.calls).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(held.calls.map((call) => call.spans)).toEqual([1]);
  });

  it("all leave on a flush, which is answered once every span received before it is done", () => {
    batches.receive(chunk(3));
    batches.receive(chunk(3));
    batches.receive({ kind: "flush", id: 7 });
    batches.receive(chunk(1));
    expect(held.calls.map((call) => call.spans)).toEqual([3]);
    held.calls[0]?.done();
    // The span received after the flush rides along where the batch has room.
    expect(held.calls.map((call) => call.spans)).toEqual([3, 4]);
    expect(sent.filter((message) => message.kind === "flushed")).toEqual([]);
    held.calls[1]?.done();
    expect(sent.filter((message) => message.kind === "flushed")).toEqual([{ kind: "flushed", id: 7 }]);
    expect(held.calls.length).toBe(2);
  });

  it("count an export that never answers as failed after OTEL_BSP_EXPORT_TIMEOUT, and go on", () => {
    batches.receive(chunk(4));
    batches.receive(chunk(4));
    vi.advanceTimersByTime(30000);
    expect(sent).toEqual([{ kind: "exported", spans: 4, bytes: 10, error: "no answer in 30000 ms (OTEL_BSP_EXPORT_TIMEOUT)" }]);
    expect(held.calls.map((call) => call.spans)).toEqual([4, 4]);
    // A late answer changes nothing.
    held.calls[0]?.done();
    expect(sent.length).toBe(1);
  });

  it("answer a flush at once when nothing waits", () => {
    batches.receive({ kind: "flush", id: 1 });
    expect(sent).toEqual([{ kind: "flushed", id: 1 }]);
  });
});
