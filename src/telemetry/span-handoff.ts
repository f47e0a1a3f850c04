import type { Worker } from "node:worker_threads";
import type { BatchSettings } from "./export-settings.js";
import type { FromExportWorker, ToExportWorker } from "./export-messages.js";
import { exportFailures, queueFullReports } from "./export-reports.js";
import { ProtobufWriter } from "./protobuf-writer.js";
import type { FinishedSpan, SpanSink } from "./recorded-span.js";
import type { DropReason, DroppedSpans } from "./tracing.js";

/** What the hand-off needs: how to encode a span, the batch settings, the worker, and where to report. */
export interface HandoffOptions {
  /** Appends one span, encoded for the export protocol, to the chunk being filled. */
  encode(writer: ProtobufWriter, span: FinishedSpan): void;
  batch: BatchSettings;
  /** Starts the export worker (again, after one stopped). */
  startWorker(): Worker;
  /** A line for the log: export failures, drops, a worker that stopped (each already rate-limited). */
  report(message: string): void;
}

/** The bytes a chunk starts with, and the size at which it is handed over whatever its span count. */
const CHUNK_BYTES = 64 * 1024;
const HANDOFF_BYTES = 48 * 1024;
/** At most this long between a span's end and its hand-over (less when OTEL_BSP_SCHEDULE_DELAY is shorter). */
const HANDOFF_MS = 100;
/** Encoded spans held at most (on both threads), however large they are (prompts, with content captured). */
export const MAX_QUEUED_BYTES = 32 * 1024 * 1024;
const FIRST_RESTART_MS = 1000;
const LAST_RESTART_MS = 60_000;

/**
 * Where ended spans go on the event loop (docs/observability.md#how-spans-leave): each is encoded
 * at once into a chunk (so it dies young), and chunks are handed to the export worker, their
 * buffers transferred, when a batch's worth is in, when a chunk is full, or 100 ms after its
 * first span. Memory is bounded: at most `OTEL_BSP_MAX_QUEUE_SIZE` spans (and 32 MiB) are in
 * the chunk, on their way or in the worker; the worker says when it is done with a batch. Beyond
 * that a span is dropped and counted. If the worker stops, what it held is counted lost and a
 * new one is started (after 1 s, doubling up to a minute); the adapter goes on meanwhile.
 */
export class SpanHandoff implements SpanSink {
  private writer = new ProtobufWriter(CHUNK_BYTES);
  private chunkSpans = 0;
  /** Chunks waiting for a worker (while one starts again). */
  private waiting: { writer: ProtobufWriter; spans: number }[] = [];
  private waitingSpans = 0;
  private waitingBytes = 0;
  /** Handed to the worker, not yet reported done. */
  private sentSpans = 0;
  private sentBytes = 0;
  private worker: Worker | undefined;
  private restartMs = FIRST_RESTART_MS;
  private timer: NodeJS.Timeout | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private readonly flushes = new Map<number, () => void>();
  private nextFlush = 0;
  private stopped = false;
  private readonly lost: Record<DropReason, number> = { queue_full: 0, export_failed: 0, worker_stopped: 0 };
  private readonly failed: (error: Error | undefined) => void;
  private readonly queueFull: (dropped: number) => void;

  constructor(private readonly options: HandoffOptions) {
    this.failed = exportFailures(options.report);
    this.queueFull = queueFullReports(options.report, `OTEL_BSP_MAX_QUEUE_SIZE=${options.batch.maxQueueSize} spans wait at most`);
    this.start();
  }

  get dropped(): DroppedSpans {
    return this.lost;
  }

  ended(span: FinishedSpan): void {
    if (this.stopped) return;
    const held = this.sentSpans + this.waitingSpans + this.chunkSpans;
    if (held >= this.options.batch.maxQueueSize || this.sentBytes + this.waitingBytes + this.writer.pos >= MAX_QUEUED_BYTES) {
      this.lost.queue_full += 1;
      this.queueFull(this.lost.queue_full);
      return;
    }
    const start = this.writer.pos;
    try {
      this.options.encode(this.writer, span);
    } catch (error) {
      // A span that cannot be encoded is lost alone, never the request that made it.
      this.writer.pos = start;
      this.lost.export_failed += 1;
      this.failed(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    this.chunkSpans += 1;
    if (this.chunkSpans >= this.options.batch.maxExportBatchSize || this.writer.pos >= HANDOFF_BYTES) this.handOver();
    else this.timer ??= setTimeout(() => this.handOver(), Math.min(HANDOFF_MS, this.options.batch.scheduledDelayMillis)).unref();
  }

  /** Hands everything over and resolves once the worker has exported it (at the latest after OTEL_BSP_EXPORT_TIMEOUT). */
  flush(): Promise<void> {
    this.handOver();
    const worker = this.worker;
    if (!worker) return Promise.resolve();
    return new Promise((resolve) => {
      const id = this.nextFlush++;
      const timeout = setTimeout(() => this.flushed(id), this.options.batch.exportTimeoutMillis).unref();
      this.flushes.set(id, () => {
        clearTimeout(timeout);
        resolve();
      });
      this.post(worker, { kind: "flush", id });
    });
  }

  /** Exports what is left and stops the worker; spans ended afterwards are ignored. */
  async shutdown(): Promise<void> {
    await this.flush();
    this.stopped = true;
    clearTimeout(this.restartTimer);
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private handOver(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.chunkSpans > 0) {
      this.waiting.push({ writer: this.writer, spans: this.chunkSpans });
      this.waitingSpans += this.chunkSpans;
      this.waitingBytes += this.writer.pos;
      this.writer = new ProtobufWriter(CHUNK_BYTES);
      this.chunkSpans = 0;
    }
    const worker = this.worker;
    if (!worker) return;
    for (const { writer, spans } of this.waiting) {
      // An unpooled buffer of its own (Buffer.allocUnsafeSlow): its whole ArrayBuffer moves to the worker.
      const buffer = writer.buffer.buffer as ArrayBuffer;
      this.sentSpans += spans;
      this.sentBytes += writer.pos;
      this.post(worker, { kind: "spans", buffer, length: writer.pos, spans }, [buffer]);
    }
    this.waiting = [];
    this.waitingSpans = 0;
    this.waitingBytes = 0;
  }

  private post(worker: Worker, message: ToExportWorker, transfer: ArrayBuffer[] = []): void {
    worker.postMessage(message, transfer);
  }

  private received(message: FromExportWorker): void {
    if (message.kind === "flushed") {
      this.flushed(message.id);
      return;
    }
    this.sentSpans -= message.spans;
    this.sentBytes -= message.bytes;
    if (message.error === undefined) this.restartMs = FIRST_RESTART_MS;
    else this.lost.export_failed += message.spans;
    this.failed(message.error === undefined ? undefined : new Error(message.error));
  }

  private flushed(id: number): void {
    const done = this.flushes.get(id);
    this.flushes.delete(id);
    done?.();
  }

  private start(): void {
    const worker = this.options.startWorker();
    worker.unref();
    let reason = "it exited";
    worker.on("message", (message: FromExportWorker) => this.received(message));
    worker.on("error", (error) => (reason = error.message));
    worker.on("exit", () => this.stoppedWorker(worker, reason));
    this.worker = worker;
    this.handOver();
  }

  /** The worker stopped (it failed, or was stopped from outside): what it held is lost; a new one starts later. */
  private stoppedWorker(worker: Worker, reason: string): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    const lost = this.sentSpans;
    this.lost.worker_stopped += lost;
    this.sentSpans = 0;
    this.sentBytes = 0;
    for (const id of [...this.flushes.keys()]) this.flushed(id);
    if (this.stopped) return;
    this.options.report(`the trace export worker stopped (${reason}): ${lost} span${lost === 1 ? "" : "s"} lost; starting it again in ${this.restartMs / 1000} s`);
    this.restartTimer = setTimeout(() => this.start(), this.restartMs).unref();
    this.restartMs = Math.min(this.restartMs * 2, LAST_RESTART_MS);
  }
}
