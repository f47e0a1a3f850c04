import type { Worker } from "node:worker_threads";
import type { BatchSettings } from "./export-settings.js";
import type { FromExportWorker, ToExportWorker } from "./export-messages.js";
import { exportFailures, queueFullReports } from "./export-reports.js";
import { ProtobufWriter } from "./protobuf-writer.js";
import type { FinishedSpan, SpanSink } from "./recorded-span.js";
import { SpanRing, type SpanRingMemory } from "./span-ring.js";
import type { DropReason, DroppedSpans } from "./tracing.js";

/** What the hand-off needs: how to encode a span, the batch settings, the ring, the worker, and where to report. */
export interface HandoffOptions {
  /** Writes one span, encoded for the export protocol, at the writer's position. */
  encode(writer: ProtobufWriter, span: FinishedSpan): void;
  batch: BatchSettings;
  memory: SpanRingMemory;
  /** Starts the export worker on the ring (again, after one stopped). */
  startWorker(memory: SpanRingMemory): Worker;
  /** A line for the log: export failures, drops, a worker that stopped (each already rate-limited). */
  report(message: string): void;
}

const FIRST_RESTART_MS = 1000;
const LAST_RESTART_MS = 60_000;

/**
 * Where ended spans go on the event loop (docs/observability.md#how-spans-leave): each is encoded
 * at once, into a scratch buffer reused for every span, and copied into the ring the export worker
 * reads (`SpanRing`); the worker is woken only when a batch's worth waits (it looks at the ring
 * each schedule delay otherwise). Memory is bounded by the ring: at most `OTEL_BSP_MAX_QUEUE_SIZE` spans (and the
 * ring's bytes) wait; a span that finds it full is dropped and counted. If the worker stops, the
 * spans of the export it had under way are counted lost; what waits in the ring is kept, and a new
 * worker starts after 1 s (doubling up to a minute while it keeps stopping). The adapter goes on
 * meanwhile, the ring filling up to its bound.
 */
export class SpanHandoff implements SpanSink {
  private readonly scratch = new ProtobufWriter(16 * 1024);
  private readonly ring: SpanRing;
  /** Whether the worker was woken for the batch's worth waiting now. */
  private batchWoken = false;
  private worker: Worker | undefined;
  private restartMs = FIRST_RESTART_MS;
  private restartTimer: NodeJS.Timeout | undefined;
  private readonly flushes = new Map<number, () => void>();
  private nextFlush = 0;
  private stopped = false;
  private readonly lost: Record<DropReason, number> = { queue_full: 0, export_failed: 0, worker_stopped: 0 };
  private readonly failed: (error: Error | undefined) => void;
  private readonly queueFull: (dropped: number) => void;

  constructor(private readonly options: HandoffOptions) {
    this.ring = new SpanRing(options.memory);
    this.failed = exportFailures(options.report);
    this.queueFull = queueFullReports(options.report, `OTEL_BSP_MAX_QUEUE_SIZE=${options.batch.maxQueueSize} spans wait at most`);
    this.start();
  }

  get dropped(): DroppedSpans {
    return this.lost;
  }

  ended(span: FinishedSpan): void {
    if (this.stopped) return;
    const { scratch } = this;
    scratch.pos = 0;
    try {
      this.options.encode(scratch, span);
    } catch (error) {
      // A span that cannot be encoded is lost alone, never the request that made it.
      this.lost.export_failed += 1;
      this.failed(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (!this.ring.push(scratch.buffer, scratch.pos)) {
      this.lost.queue_full += 1;
      this.queueFull(this.lost.queue_full);
      return;
    }
    // A batch's worth is sent at once; fewer leave when the worker's schedule delay runs out.
    if (this.ring.waiting < this.options.batch.maxExportBatchSize) this.batchWoken = false;
    else if (!this.batchWoken) {
      this.batchWoken = true;
      this.ring.notify();
    }
  }

  /** Resolves once the worker has exported every span ended before (at the latest after OTEL_BSP_EXPORT_TIMEOUT). */
  flush(): Promise<void> {
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

  private post(worker: Worker, message: ToExportWorker): void {
    worker.postMessage(message);
  }

  private received(message: FromExportWorker): void {
    if (message.kind === "flushed") {
      this.flushed(message.id);
      return;
    }
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
    this.ring.inFlight = 0;
    const worker = this.options.startWorker(this.options.memory);
    worker.unref();
    let reason = "it exited";
    worker.on("message", (message: FromExportWorker) => this.received(message));
    worker.on("error", (error) => (reason = error.message));
    worker.on("exit", () => this.stoppedWorker(worker, reason));
    this.worker = worker;
  }

  /** The worker stopped (it failed, or was stopped from outside): the export it had under way is lost; a new one starts later. */
  private stoppedWorker(worker: Worker, reason: string): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    const lost = this.ring.inFlight;
    this.lost.worker_stopped += lost;
    for (const id of [...this.flushes.keys()]) this.flushed(id);
    if (this.stopped) return;
    this.options.report(`the trace export worker stopped (${reason}): ${lost} span${lost === 1 ? "" : "s"} lost; starting it again in ${this.restartMs / 1000} s`);
    this.restartTimer = setTimeout(() => this.start(), this.restartMs).unref();
    this.restartMs = Math.min(this.restartMs * 2, LAST_RESTART_MS);
  }
}
