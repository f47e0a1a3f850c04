import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { FromExportWorker } from "../../../src/telemetry/export-messages.js";
import { ExportRequests } from "../../../src/telemetry/otlp-request.js";
import { type BodyExporter, SpanExport } from "../../../src/telemetry/span-export.js";
import { ringMemory, SpanRing } from "../../../src/telemetry/span-ring.js";

// The ring between the event loop and the export worker, and the worker's batching
// (docs/observability.md#how-spans-leave), with a fake exporter and the timeouts faked.

const BATCH = { maxQueueSize: 100, maxExportBatchSize: 4, scheduledDelayMillis: 5000, exportTimeoutMillis: 30000 };

/** A stand-in for an encoded JSON span (`,` then a JSON value) of `bytes` bytes. */
function span(bytes = 10, fill = "x"): Buffer {
  return Buffer.from(`,"${fill.repeat(bytes - 3)}"`);
}

/** Lets the worker side run: the ring's wake-ups resolve as tasks of the event loop. */
async function settle(): Promise<void> {
  for (let turn = 0; turn < 5; turn += 1) await new Promise((resolve) => setImmediate(resolve));
}

describe("the span ring", () => {
  it("hands spans over in order, across its end, and frees their room once read", () => {
    const ring = new SpanRing(ringMemory(8));
    const size = ring.memory.buffer.byteLength - 32;
    const big = Buffer.alloc(size / 3, "a");
    const read: string[] = [];
    for (let round = 0; round < 5; round += 1) {
      expect(ring.push(big, big.length)).toBe(true);
      expect(ring.push(span(6, String(round)), 6)).toBe(true);
      expect(ring.waiting).toBe(2);
      expect(ring.read(10, (views) => read.push(...views.map((view) => Buffer.from(view).toString().slice(0, 3))))).toBe(2);
      expect(ring.waiting).toBe(0);
    }
    expect(read).toEqual(["aaa", ',"0', "aaa", ',"1', "aaa", ',"2', "aaa", ',"3', "aaa", ',"4']);
  });

  it("refuses a span when its bytes or its span count are full", () => {
    const ring = new SpanRing(ringMemory(3));
    const size = ring.memory.buffer.byteLength - 32;
    expect(ring.push(Buffer.alloc(size), size)).toBe(false);
    for (let index = 0; index < 3; index += 1) expect(ring.push(span(), 10)).toBe(true);
    expect(ring.push(span(), 10)).toBe(false);
    ring.read(1, () => undefined);
    expect(ring.push(span(), 10)).toBe(true);
  });
});

describe("the export worker's batches", () => {
  let sent: FromExportWorker[];
  let calls: { spans: number; body: string; done: (error?: Error) => void }[];
  let ring: SpanRing;
  let batches: SpanExport;
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    sent = [];
    calls = [];
    ring = new SpanRing(ringMemory(BATCH.maxQueueSize));
    const exporter: BodyExporter = {
      export: (body, spans, done) => void calls.push({ spans, body: Buffer.from(body).toString(), done }),
      shutdown: () => Promise.resolve(),
    };
    batches = new SpanExport(ring, new ExportRequests("http/json", {}, { name: "s", version: "1" }), exporter, BATCH, (message) => sent.push(message));
    batches.start();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** What the event loop does: a span into the ring, and a wake-up when it says so. */
  function write(count: number, wake = true): void {
    for (let index = 0; index < count; index += 1) ring.push(span(), 10);
    if (wake) ring.notify();
  }

  it("leave once a batch's worth waits, one export at a time, each reported with its spans", async () => {
    write(3);
    await settle();
    expect(calls).toEqual([]);
    write(6);
    await settle();
    expect(calls.map((call) => call.spans)).toEqual([4]);
    expect(JSON.parse(calls[0]?.body ?? "").resourceSpans[0].scopeSpans[0].spans).toEqual(["xxxxxxx", "xxxxxxx", "xxxxxxx", "xxxxxxx"]);
    calls[0]?.done();
    expect(sent).toEqual([{ kind: "exported", spans: 4 }]);
    expect(calls.map((call) => call.spans)).toEqual([4, 4]);
    calls[1]?.done(new Error("refused"));
    expect(sent.at(-1)).toEqual({ kind: "exported", spans: 4, error: "refused" });
    // One waits for its delay.
    expect(calls).toHaveLength(2);
    expect(ring.waiting).toBe(1);
  });

  it("leave after OTEL_BSP_SCHEDULE_DELAY when fewer wait, the worker looking at the ring once a delay", async () => {
    vi.useRealTimers();
    const quick = new SpanRing(ringMemory(10));
    const exported: number[] = [];
    const exporter: BodyExporter = { export: (_body, spans, done) => done(void exported.push(spans)), shutdown: () => Promise.resolve() };
    const started = performance.now();
    new SpanExport(quick, new ExportRequests("http/json", {}, { name: "s", version: "1" }), exporter, { ...BATCH, scheduledDelayMillis: 50 }, () => undefined).start();
    quick.push(span(), 10);
    quick.push(span(), 10);
    await vi.waitFor(() => expect(exported).toEqual([2]), { timeout: 5000 });
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
  });

  it("all leave on a flush, which is answered once every span written before it is exported", async () => {
    write(6, false);
    batches.receive({ kind: "flush", id: 7 });
    write(1, false);
    expect(calls.map((call) => call.spans)).toEqual([4]);
    calls[0]?.done();
    // The span written after the flush rides along where the batch has room.
    expect(calls.map((call) => call.spans)).toEqual([4, 3]);
    expect(sent.filter((message) => message.kind === "flushed")).toEqual([]);
    calls[1]?.done();
    expect(sent.filter((message) => message.kind === "flushed")).toEqual([{ kind: "flushed", id: 7 }]);
    expect(calls).toHaveLength(2);
  });

  it("answer a flush at once when nothing waits", () => {
    batches.receive({ kind: "flush", id: 1 });
    expect(sent).toEqual([{ kind: "flushed", id: 1 }]);
  });

  it("count an export that never answers as failed after OTEL_BSP_EXPORT_TIMEOUT, and go on", async () => {
    write(8);
    await settle();
    vi.advanceTimersByTime(30000);
    expect(sent).toEqual([{ kind: "exported", spans: 4, error: "no answer in 30000 ms (OTEL_BSP_EXPORT_TIMEOUT)" }]);
    expect(calls.map((call) => call.spans)).toEqual([4, 4]);
    // A late answer changes nothing.
    calls[0]?.done();
    expect(sent).toHaveLength(1);
  });
});
