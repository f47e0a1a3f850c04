import type { Clock } from "../../src/util/clock.js";

/** How long a wait on a condition may take before the test fails: generous, so a busy machine only makes a test slower. */
export const WAIT_DEADLINE_MS = 15_000;

/**
 * Waits until `check` holds (a truthy result), looking every `intervalMs`, and fails naming `what`
 * after `timeoutMs`. Tests wait on conditions (events, metrics, counters, logs) instead of a fixed
 * sleep, so that a slow or busy machine makes them slower, never failing. Returns what `check` gave.
 */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  what: string,
  { timeoutMs = WAIT_DEADLINE_MS, intervalMs = 10 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await check();
    if (result) return result as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * A clock for the embedded workspace that advances `stepMs` each time it is read, instead of with
 * the wall clock: a query then moves on by one step of its pace per request the workspace answers,
 * so what a poller sees (how many steps and output chunks, in how many polls) does not depend on how
 * fast the machine runs. Its timers are the real ones.
 */
export function steppingClock(stepMs: number, start = Date.now()): Clock {
  let now = start;
  return {
    now: () => (now += stepMs),
    setTimeout: (callback, ms) => setTimeout(callback, ms),
    clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
  };
}
