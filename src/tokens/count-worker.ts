import { parentPort, workerData } from "node:worker_threads";
import { countO200k } from "./count-o200k.js";
import type { RankTable } from "./rank-table.js";

/** A batch of texts to count, and the answer: one count per text, in order. */
export interface CountJob {
  id: number;
  texts: string[];
}
/** The worker's answer to a {@link CountJob}. */
export interface CountResult {
  id: number;
  counts?: number[];
  error?: string;
}

// The token worker (token-counter.ts): counts with the table the main thread shares with it.
const table = (workerData as { table: RankTable }).table;
parentPort?.on("message", (jobs: CountJob[]) => {
  const results: CountResult[] = jobs.map(({ id, texts }) => {
    try {
      return { id, counts: texts.map((text) => countO200k(table, text)) };
    } catch (error) {
      return { id, error: String((error as Error).message) };
    }
  });
  parentPort?.postMessage(results);
});
