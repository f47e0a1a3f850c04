import type { Clock } from "./clock.js";

/** How a write retried in the background went: at once, after retries, or not at all. */
export type RetryOutcome = "stored" | "retried" | "lost";

/** Waits before the retries of a background write: about four seconds in all, past a moment's outage or a failover. */
const BACKGROUND_WRITE_RETRY_DELAYS_MS: readonly number[] = [250, 1000, 3000];

/** A write under way: its first attempt, and how it ended after any retries. */
export interface RetriedWrite {
  /** Settles (never rejects) when the first attempt has succeeded or failed. */
  firstAttempt: Promise<void>;
  /** How it ended, and why the last attempt failed when it was lost. Never rejects. */
  outcome: Promise<{ outcome: RetryOutcome; lastError?: unknown }>;
}

/**
 * Runs `attempt` and, while it fails, again after each of `delaysMs` — or sooner, when `wake`
 * resolves (the store answers again) — for a write that must not be lost to a moment's outage: a
 * conversation turn, a stored response. The caller may wait for the first attempt and leave the
 * retries to the background.
 */
export function retryBriefly(
  attempt: () => Promise<void>,
  delaysMs: readonly number[],
  clock: Pick<Clock, "setTimeout">,
  wake?: () => Promise<void>,
): RetriedWrite {
  let attempted!: () => void;
  const firstAttempt = new Promise<void>((resolve) => {
    attempted = resolve;
  });
  const outcome = (async () => {
    let lastError: unknown;
    for (let index = 0; index <= delaysMs.length; index += 1) {
      if (index > 0) {
        const delay = new Promise<void>((resolve) => clock.setTimeout(resolve, delaysMs[index - 1] as number));
        await (wake ? Promise.race([delay, wake()]) : delay);
      }
      try {
        await attempt();
        attempted();
        return { outcome: index === 0 ? ("stored" as const) : ("retried" as const) };
      } catch (error) {
        attempted();
        lastError = error;
      }
    }
    return { outcome: "lost" as const, lastError };
  })();
  return { firstAttempt, outcome };
}

/** Resolves when `promise` settles or after `ms`, whichever is first: a wait that must stay bounded. */
function settleWithin(promise: Promise<unknown>, ms: number, clock: Pick<Clock, "setTimeout" | "clearTimeout">): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = clock.setTimeout(resolve, ms);
    const settled = () => {
      clock.clearTimeout(timer);
      resolve();
    };
    promise.then(settled, settled);
  });
}

/** How a background write is retried, reported and waited for (`writeBriefly`). */
export interface BriefWriteOptions {
  clock: Pick<Clock, "setTimeout" | "clearTimeout">;
  /** Resolves when the store answers again: retry at once. */
  wake?: (() => Promise<void>) | undefined;
  /** Bound on the wait for the first attempt; unset waits for it (a store in process answers at once). */
  waitMs?: number | undefined;
  /** How the write ended (metrics). */
  onOutcome?: ((outcome: RetryOutcome) => void) | undefined;
  /** The write was lost after every retry (a log line naming what was lost). */
  onLost: (error: unknown) => void;
}

/**
 * A write that ends an answer: tried at once and retried briefly in the background
 * (`retryBriefly`, `BACKGROUND_WRITE_RETRY_DELAYS_MS`), its outcome reported. Resolves once the
 * first attempt was answered, or after `waitMs`: the caller ends the answer then.
 */
export function writeBriefly(attempt: () => Promise<void>, options: BriefWriteOptions): Promise<void> {
  const written = retryBriefly(attempt, BACKGROUND_WRITE_RETRY_DELAYS_MS, options.clock, options.wake);
  void written.outcome.then(({ outcome, lastError }) => {
    options.onOutcome?.(outcome);
    if (outcome === "lost") options.onLost(lastError);
  });
  return options.waitMs === undefined ? written.firstAttempt : settleWithin(written.firstAttempt, options.waitMs, options.clock);
}
