/**
 * How soon a waiting query wants its next poll: `urgent` once its channel showed a terminal status
 * (the list must confirm it now), `relaxed` while its channel is live and speaking (the slowest
 * interval will do), `normal` otherwise.
 */
export type PollPace = "urgent" | "relaxed" | "normal";

/** What the pace needs of a waiting query: since when it waits, and how soon it wants polling. */
export interface PacedWaiter {
  readonly since: number;
  pace(now: number): PollPace;
}

/** The bounds of a workspace's poll interval (docs/upstream-assumptions.md#polling). */
export interface PollInterval {
  minMs: number;
  maxMs: number;
}

/**
 * The delay before a workspace's next poll. The interval adapts to the youngest waiting query:
 * fast while it is new (most answers come within seconds), slower as it ages (a long `build`
 * query needs no 10 polls a second), and slower again while polls fail (doubling per failure, up
 * to 32×, never beyond the longest interval). A query whose realtime channel is live and speaking
 * needs only the slowest interval; one whose channel showed its end needs the fastest.
 */
export function nextPollDelay(
  interval: PollInterval,
  now: number,
  failures: number,
  waiters: Iterable<PacedWaiter>,
): number {
  const { minMs: min, maxMs: max } = interval;
  let youngest = Number.POSITIVE_INFINITY;
  for (const waiter of waiters) {
    const pace = waiter.pace(now);
    if (pace === "urgent") youngest = 0;
    else if (pace === "normal") youngest = Math.min(youngest, now - waiter.since);
  }
  const byAge = Math.max(min, Math.min(max, youngest / 4));
  return Math.min(max, byAge * 2 ** Math.min(failures, 5));
}
