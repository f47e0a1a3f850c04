import type { RetryOutcome } from "../util/retry-briefly.js";

/**
 * How a continuity store's writes that end an answer are waited for and reported, and its refused
 * lookups told: one set of names for every store (the thread memory, stored responses, the query
 * owners), all from one source (`createContinuity`).
 */
export interface StoreWriting {
  /** How long an answer waits for its write before it ends anyway (`STORE_WRITE_WAIT_MS`); unset for a store in process (it answers at once). */
  writeWaitMs?: number | undefined;
  /** How each write went (metrics). */
  onWrite?: ((outcome: RetryOutcome) => void) | undefined;
  /** A request was refused because the store could not answer (metrics). */
  onRefused?: (() => void) | undefined;
  /** Resolves when the store answers again after an outage: a failed write's cue to retry at once. */
  wake?: (() => Promise<void>) | undefined;
}
