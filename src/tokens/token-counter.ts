import { setImmediate as nextTurn } from "node:timers/promises";
import { Worker } from "node:worker_threads";
import { countO200k, pieceBoundaryNear } from "./count-o200k.js";
import type { CountJob, CountResult } from "./count-worker.js";
import { o200kRanks, type RankTable } from "./rank-table.js";

/** Counts o200k tokens of texts (docs/upstream-assumptions.md#usage), without blocking the event loop on long ones. */
export interface TokenCounter {
  count(texts: readonly string[]): Promise<number[]>;
  close(): Promise<void>;
}

/**
 * Starts counting `text` on the next turn of the event loop, so that a prompt is counted after its
 * request is on the wire, while the upstream works on it, instead of after the answer arrives.
 * The promise never rejects unhandled: a request that fails first simply never reads it.
 */
export function countSoon(counter: TokenCounter, text: string): Promise<number> {
  const counted = new Promise<number>((resolve, reject) => {
    setImmediate(() => counter.count([text]).then(([count]) => resolve(count ?? 0), reject));
  });
  counted.catch(() => {});
  return counted;
}

/**
 * Prompts longer than this are worth counting early ({@link countSoon}); a shorter one is counted
 * in the same job as the answer: a few microseconds more there, one worker round trip less per request.
 */
export const EARLY_COUNT_CHARS = 2048;

/** Characters counted between two turns of the event loop: about half a millisecond of counting. */
const SLICE_CHARS = 16_384;

/**
 * Counts on the event loop, with the compact o200k table (rank-table.ts) and the ASCII-first
 * counter (count-o200k.ts). Texts longer than a slice are counted a
 * slice at a time, cut where the count cannot change, with a turn of the event loop between
 * slices, so that a 200 KB answer never blocks it for more than about half a millisecond.
 */
export class O200kTokenCounter implements TokenCounter {
  constructor(
    private readonly table: RankTable = o200kRanks(),
    private readonly sliceChars = SLICE_CHARS,
  ) {}

  async count(texts: readonly string[]): Promise<number[]> {
    const counts: number[] = [];
    let countedSinceTurn = 0;
    for (const text of texts) {
      let total = 0;
      for (let start = 0; start < text.length; ) {
        const end = text.length - start <= this.sliceChars ? text.length : pieceBoundaryNear(text, start + this.sliceChars);
        if (countedSinceTurn > 0 && countedSinceTurn + (end - start) > this.sliceChars) {
          await nextTurn();
          countedSinceTurn = 0;
        }
        total += countO200k(this.table, start === 0 && end === text.length ? text : text.slice(start, end));
        countedSinceTurn += end - start;
        start = end;
      }
      counts.push(total);
    }
    return counts;
  }

  async close(): Promise<void> {}
}

/** How the adapter counts: on a worker thread when busy, on the event loop when idle. */
export interface WorkerTokenCounterOptions {
  /** The compiled count-worker module; without one (running from sources), counting stays inline. */
  workerUrl?: URL | null;
  /**
   * Whether nothing else is going on (the adapter: at most one request in flight, the one being
   * counted); short texts are then counted inline. Without it, everything goes to the worker.
   */
  isIdle?: () => boolean;
}

/**
 * Counts on a worker thread while the adapter is busy, and on the event loop while it is idle.
 * Under load, the worker moves the counting to the other core; idle, the round trip to a
 * sleeping thread costs more latency than counting a short answer here, so short texts are
 * counted inline then (long ones always go to the worker; docs/benchmarks.md has the numbers).
 * Both read one table: its arrays are shared with the worker, so the worker costs its isolate,
 * not a second tokenizer. Jobs posted in one turn of the loop travel in one message.
 * If the worker dies, everything is counted inline.
 */
export class WorkerTokenCounter implements TokenCounter {
  private readonly inline: O200kTokenCounter;
  private worker: Worker | null = null;
  private readonly pending = new Map<number, { resolve(counts: number[]): void; reject(error: Error): void }>();
  private queued: CountJob[] = [];
  private nextId = 0;
  private readonly isIdle: () => boolean;

  constructor(table: RankTable = o200kRanks(), options: WorkerTokenCounterOptions = {}) {
    this.inline = new O200kTokenCounter(table);
    this.isIdle = options.isIdle ?? (() => false);
    const workerUrl = options.workerUrl === undefined ? compiledWorkerUrl() : options.workerUrl;
    if (!workerUrl) return;
    const worker = new Worker(workerUrl, {
      workerData: { table },
      // Texts arrive as strings and leave as numbers: a small young generation is plenty.
      resourceLimits: { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 256 },
    });
    worker.unref();
    worker.on("message", (results: CountResult[]) => {
      for (const { id, counts, error } of results) {
        const waiter = this.pending.get(id);
        this.pending.delete(id);
        if (counts) waiter?.resolve(counts);
        else waiter?.reject(new Error(error ?? "token counting failed"));
      }
    });
    worker.on("error", () => this.failAll());
    worker.on("exit", () => this.failAll());
    this.worker = worker;
  }

  async count(texts: readonly string[]): Promise<number[]> {
    const length = texts.reduce((sum, text) => sum + text.length, 0);
    if (!this.worker || (length <= SLICE_CHARS && this.isIdle())) return this.inline.count(texts);
    try {
      return await new Promise<number[]>((resolve, reject) => {
        const id = this.nextId++;
        this.pending.set(id, { resolve, reject });
        if (this.queued.push({ id, texts: [...texts] }) === 1) setImmediate(() => this.flush());
      });
    } catch {
      return this.inline.count(texts);
    }
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    await worker?.terminate();
  }

  private flush(): void {
    const jobs = this.queued;
    this.queued = [];
    if (this.worker) this.worker.postMessage(jobs);
    else {
      for (const { id } of jobs) {
        this.pending.get(id)?.reject(new Error("token worker stopped"));
        this.pending.delete(id);
      }
    }
  }

  private failAll(): void {
    this.worker = null;
    for (const waiter of this.pending.values()) waiter.reject(new Error("token worker stopped"));
    this.pending.clear();
  }
}

/** The compiled worker beside this module; none when running from TypeScript sources. */
function compiledWorkerUrl(): URL | null {
  return import.meta.url.endsWith(".js") ? new URL("./count-worker.js", import.meta.url) : null;
}
