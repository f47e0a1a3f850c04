import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";

/** Counts o200k tokens of texts (DESIGN.md, Contract item 8), without blocking the event loop on long ones. */
export interface TokenCounter {
  count(texts: readonly string[]): Promise<number[]>;
  close(): Promise<void>;
}

// Text is counted as plain text: special-token strings such as "<|endoftext|>" in a document
// are ordinary characters here, not a reason to throw.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/** The count of one text, in this thread. */
export function countTextTokens(text: string): number {
  return text === "" ? 0 : countTokens(text, PLAIN_TEXT);
}

/** Counts in this thread: for tests and tools, where blocking does not matter. */
export const inlineTokenCounter: TokenCounter = {
  count: async (texts) => texts.map(countTextTokens),
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
 * about 15 ms to count) and lands on another core. Short texts are counted in this thread, where
 * that is cheaper than the round trip. If the worker dies, counting falls back to this thread.
 */
export class WorkerTokenCounter implements TokenCounter {
  private worker: Worker | null;
  private readonly pending = new Map<number, { resolve(counts: number[]): void; reject(error: Error): void }>();
  private nextId = 0;

  constructor(private readonly inlineBelowChars = 256) {
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
    const total = texts.reduce((sum, text) => sum + text.length, 0);
    if (!this.worker || total < this.inlineBelowChars) return texts.map(countTextTokens);
    const id = this.nextId++;
    try {
      return await new Promise<number[]>((resolve, reject) => {
        this.pending.set(id, { resolve, reject });
        this.worker?.postMessage({ id, texts });
      });
    } catch {
      return texts.map(countTextTokens);
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
