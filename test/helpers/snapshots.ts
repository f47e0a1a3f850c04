import type { QuerySnapshot } from "../../src/core/query-snapshot.js";

/** A snapshot of query `q1` with no sources or usage: what the watcher hands on, for tests of what follows it. */
export const snapshot = (status: QuerySnapshot["status"], output = "", steps: unknown[] = []): QuerySnapshot => ({
  id: "q1",
  status,
  output,
  steps,
  sources: [],
  usage: undefined,
});
