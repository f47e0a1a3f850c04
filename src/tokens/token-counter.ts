import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type * as Tokenizer from "gpt-tokenizer/encoding/o200k_base";

/** Counts o200k tokens of texts (DESIGN.md, Contract item 8), without blocking the event loop on long ones. */
export interface TokenCounter {
  count(texts: readonly string[]): Promise<number[]>;
  close(): Promise<void>;
}

// Text is counted as plain text: special-token strings such as "<|endoftext|>" in a document
// are ordinary characters here, not a reason to throw.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

// The tokenizer's tables take about 66 MB; this thread loads them only when it counts itself.
let tokenizer: Promise<typeof Tokenizer> | undefined;

/** Counts in this thread (loading the tokenizer on first use). */
async function countHere(texts: readonly string[]): Promise<number[]> {
  tokenizer ??= import("gpt-tokenizer/encoding/o200k_base");
  const { countTokens } = await tokenizer;
  return texts.map((text) => (text === "" ? 0 : countTokens(text, PLAIN_TEXT)));
}

/** Counts in this thread: for tests and tools, where blocking does not matter. */
export const inlineTokenCounter: TokenCounter = {
  count: countHere,
  close: async () => {},
};

// The worker's code: it loads the tokenizer by absolute URL (passed in), so the same code runs
// from src/ under the test runner and from dist/ in production.
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
import(workerData.tokenizerUrl).then(({ countTokens }) => {
  const plain = { disallowedSpecial: new Set() };
  parentPort.on("message", ({ id, texts }) => {
    try {
      parentPort.postMessage({ id, counts: texts.map((text) => (text === "" ? 0 : countTokens(text, plain))) });
    } catch (error) {
      parentPort.postMessage({ id, error: String(error && error.message) });
    }
  });
  parentPort.postMessage({ ready: true });
});
`;

/**
 * Counts on a worker thread: the tokenizer's CPU time leaves the event loop (a 200 KB answer takes
 * about 15 ms to count) and lands on another core (measured +30% throughput at 50 connections),
 * and its 66 MB of tables are loaded there only. The price is the round trip, about 0.2 ms on an
 * idle adapter; counting short texts in this thread when idle was measured too (0.2 ms faster
 * alone, 10% slower under load, and a second copy of the tables): docs/benchmarks.md. If the
 * worker dies, counting falls back to this thread.
 */
export class WorkerTokenCounter implements TokenCounter {
  private worker: Worker | null;
  private readonly pending = new Map<number, { resolve(counts: number[]): void; reject(error: Error): void }>();
  private nextId = 0;

  constructor() {
    const tokenizerUrl = pathToFileURL(createRequire(import.meta.url).resolve("gpt-tokenizer/encoding/o200k_base")).href;
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { tokenizerUrl } });
    this.worker.unref();
    this.worker.on("message", (message: { id?: number; counts?: number[]; error?: string }) => {
      if (message.id === undefined) return;
      const waiter = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.counts) waiter?.resolve(message.counts);
      else waiter?.reject(new Error(message.error ?? "token counting failed"));
    });
    this.worker.on("error", () => this.failAll());
    this.worker.on("exit", () => this.failAll());
  }

  async count(texts: readonly string[]): Promise<number[]> {
    if (!this.worker) return countHere(texts);
    const id = this.nextId++;
    try {
      return await new Promise<number[]>((resolve, reject) => {
        this.pending.set(id, { resolve, reject });
        this.worker?.postMessage({ id, texts });
      });
    } catch {
      return countHere(texts);
    }
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    await worker?.terminate();
  }

  private failAll(): void {
    this.worker = null;
    for (const waiter of this.pending.values()) waiter.reject(new Error("token worker stopped"));
    this.pending.clear();
  }
}
