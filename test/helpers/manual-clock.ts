/**
 * A clock for unit tests whose timers run only when the test says so (`runAll`, whatever their
 * delay), and whose time moves only by hand (`advance`): what a test of timeouts and probes needs
 * to be independent of the machine's pace.
 */
export function manualClock() {
  const timers = new Map<number, () => void>();
  let next = 0;
  let now = 0;
  return {
    now: () => now,
    setTimeout: (callback: () => void, _ms?: number) => {
      next += 1;
      timers.set(next, callback);
      return next;
    },
    clearTimeout: (handle: unknown) => {
      timers.delete(handle as number);
    },
    /** Moves the time on (no timer runs). */
    advance(ms: number) {
      now += ms;
    },
    /** Runs every timer set so far, once. */
    runAll() {
      const due = [...timers.values()];
      timers.clear();
      for (const callback of due) callback();
    },
    /** Timers set and not yet run or cleared. */
    get pending() {
      return timers.size;
    },
  };
}
