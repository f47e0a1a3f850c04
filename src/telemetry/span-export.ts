import type { BatchSettings } from "./export-settings.js";
import type { FromExportWorker, ToExportWorker } from "./export-messages.js";
import type { ExportRequests } from "./otlp-request.js";

/** Sends one request body of `spans` spans; `done` gets the error that lost them, or nothing. */
export interface BodyExporter {
  export(body: Uint8Array, spans: number, done: (error?: Error) => void): void;
  shutdown(): Promise<void>;
}

interface Chunk {
  bytes: Uint8Array;
  spans: number;
}

/**
 * The export worker's batch span processor (the specification's: OTEL_BSP_*): chunks of encoded
 * spans queue up as the event loop hands them over; a batch leaves when `maxExportBatchSize` spans
 * wait, or `scheduledDelayMillis` after the first one came, one export at a time (an exporter is
 * never called concurrently); an export that has not answered in `exportTimeoutMillis` counts as
 * failed. Each finished batch is reported (`exported`), so that the event loop knows how many
 * spans are still in memory. A flush sends everything received before it, at once.
 */
export class SpanExport {
  private readonly queue: Chunk[] = [];
  private queued = 0;
  private received = 0;
  private done = 0;
  private exporting = false;
  private timer: NodeJS.Timeout | undefined;
  /** Flushes waiting, each for every span received before it (`received` then). */
  private readonly flushes: { id: number; upTo: number }[] = [];

  constructor(
    private readonly requests: ExportRequests,
    private readonly exporter: BodyExporter,
    private readonly batch: BatchSettings,
    private readonly send: (message: FromExportWorker) => void,
  ) {}

  receive(message: ToExportWorker): void {
    if (message.kind === "spans") {
      this.queue.push({ bytes: new Uint8Array(message.buffer, 0, message.length), spans: message.spans });
      this.queued += message.spans;
      this.received += message.spans;
    } else this.flushes.push({ id: message.id, upTo: this.received });
    this.next();
  }

  /** Stops the exporter once nothing is left to send. */
  async shutdown(): Promise<void> {
    clearTimeout(this.timer);
    await this.exporter.shutdown();
  }

  /** Exports a batch now if one is due, or sets the timer for the next. */
  private next(): void {
    this.answerFlushes();
    if (this.exporting || this.queued === 0) return;
    if (this.queued >= this.batch.maxExportBatchSize || this.flushes.length > 0) {
      this.exportBatch();
      return;
    }
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      if (!this.exporting) this.exportBatch();
    }, this.batch.scheduledDelayMillis);
  }

  private exportBatch(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const chunks: Uint8Array[] = [];
    let spans = 0;
    let bytes = 0;
    // Whole chunks (the event loop hands over at most a batch's worth in one) up to a batch.
    for (let chunk = this.queue[0]; chunk; chunk = this.queue[0]) {
      if (chunks.length > 0 && spans + chunk.spans > this.batch.maxExportBatchSize) break;
      this.queue.shift();
      chunks.push(chunk.bytes);
      spans += chunk.spans;
      bytes += chunk.bytes.length;
    }
    this.queued -= spans;
    this.exporting = true;
    let settled = false;
    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      this.exporting = false;
      this.done += spans;
      this.send({ kind: "exported", spans, bytes, ...(error ? { error: error.message } : {}) });
      this.next();
    };
    const deadline = setTimeout(() => finish(new Error(`no answer in ${this.batch.exportTimeoutMillis} ms (OTEL_BSP_EXPORT_TIMEOUT)`)), this.batch.exportTimeoutMillis);
    try {
      this.exporter.export(this.requests.build(chunks), spans, finish);
    } catch (error) {
      finish(error instanceof Error ? error : new Error(String(error)));
    }
  }

  private answerFlushes(): void {
    while (this.flushes.length > 0 && (this.flushes[0] as { upTo: number }).upTo <= this.done) {
      this.send({ kind: "flushed", id: (this.flushes.shift() as { id: number }).id });
    }
  }
}
