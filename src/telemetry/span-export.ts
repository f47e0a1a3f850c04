import type { BatchSettings } from "./export-settings.js";
import type { FromExportWorker, ToExportWorker } from "./export-messages.js";
import type { ExportRequests } from "./otlp-request.js";
import type { SpanRing } from "./span-ring.js";

/** Sends one request body of `spans` spans; `done` gets the error that lost them, or nothing. */
export interface BodyExporter {
  export(body: Uint8Array, spans: number, done: (error?: Error) => void): void;
  shutdown(): Promise<void>;
}

/**
 * The export worker's batch span processor (the specification's: OTEL_BSP_*), reading the ring
 * the event loop writes: a batch leaves when `maxExportBatchSize` spans wait, or
 * `scheduledDelayMillis` after the first one came, one export at a time (an exporter is never
 * called concurrently); an export that has not answered in `exportTimeoutMillis` counts as failed.
 * Reading a batch frees its room in the ring at once (the request body holds a copy), so the ring
 * and the one export under way are all the memory spans take. Between batches the worker sleeps
 * on the ring for the schedule delay, woken early only when a batch's worth waits (so a span
 * waits at most one delay, and a quiet adapter wakes the worker once a delay). A flush sends
 * everything written before it, at once.
 */
export class SpanExport {
  private exporting = false;
  private sleeping = false;
  /** The schedule delay ran out while spans waited: they leave however few. */
  private due = false;
  /** Flushes waiting, each for every span written before it. */
  private readonly flushes: { id: number; upTo: number }[] = [];
  private read = 0;

  constructor(
    private readonly ring: SpanRing,
    private readonly requests: ExportRequests,
    private readonly exporter: BodyExporter,
    private readonly batch: BatchSettings,
    private readonly send: (message: FromExportWorker) => void,
  ) {}

  /** Starts reading the ring. */
  start(): void {
    this.next();
  }

  receive(message: ToExportWorker): void {
    this.flushes.push({ id: message.id, upTo: this.read + this.ring.waiting });
    this.next();
  }

  /** Exports a batch now if one is due, or sleeps on the ring until one is. */
  private next(): void {
    // Read before looking at the ring: a wake-up given after this is not missed.
    const seen = this.ring.wake;
    if (!this.exporting) this.answerFlushes();
    if (this.exporting) return;
    const waiting = this.ring.waiting;
    if (waiting >= this.batch.maxExportBatchSize || (waiting > 0 && (this.due || this.flushes.length > 0))) {
      this.exportBatch();
      return;
    }
    this.sleep(seen);
  }

  private sleep(seen: number): void {
    if (this.sleeping) return;
    this.sleeping = true;
    void this.ring.waitFor(seen, this.batch.scheduledDelayMillis).then((woken) => {
      this.sleeping = false;
      if (woken === "timed-out") this.due = true;
      this.next();
    });
  }

  private exportBatch(): void {
    this.due = false;
    let body: Uint8Array = new Uint8Array();
    const spans = this.ring.read(this.batch.maxExportBatchSize, (views) => (body = this.requests.build(views)));
    this.read += spans;
    this.ring.inFlight = spans;
    this.exporting = true;
    let settled = false;
    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      this.ring.inFlight = 0;
      this.exporting = false;
      this.send({ kind: "exported", spans, ...(error ? { error: error.message } : {}) });
      this.next();
    };
    const deadline = setTimeout(() => finish(new Error(`no answer in ${this.batch.exportTimeoutMillis} ms (OTEL_BSP_EXPORT_TIMEOUT)`)), this.batch.exportTimeoutMillis);
    try {
      this.exporter.export(body, spans, finish);
    } catch (error) {
      finish(error instanceof Error ? error : new Error(String(error)));
    }
  }

  private answerFlushes(): void {
    while (this.flushes.length > 0 && (this.flushes[0] as { upTo: number }).upTo <= this.read) {
      this.send({ kind: "flushed", id: (this.flushes.shift() as { id: number }).id });
    }
  }
}
