import { setImmediate as nextTurn } from "node:timers/promises";
import { countO200k, pieceBoundaryNear } from "./count-o200k.js";
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
 * with the answer, a few microseconds more there.
 */
export const EARLY_COUNT_CHARS = 2048;

/** Characters counted between two turns of the event loop: about half a millisecond of counting. */
const SLICE_CHARS = 16_384;

/**
 * The adapter's token counter: o200k counted on the event loop, a slice of a long text at a time,
 * cut where the count cannot change, with a turn of the loop between slices. The counter is ours,
 * not tiktoken's or gpt-tokenizer's, because both merge a long word in quadratic time: a client's
 * 64 KB one-word prompt costs seconds of CPU there (1.7–12 s) against milliseconds here, and a 1 MB
 * body minutes; on ordinary text they take 3.5–17× its CPU (docs/benchmarks.md#token-counting).
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
