import { type Callback, Cluster } from "ioredis";
import { afterEach, describe, expect, it, vi } from "vitest";
import { PacedCluster } from "../../../src/redis/paced-cluster.js";

/** A clock the test moves by hand, with timers it runs when the test says so. */
function manualClock() {
  let now = 0;
  const timers: { at: number; callback: () => void }[] = [];
  return {
    now: () => now,
    setTimeout: (callback: () => void, ms: number) => {
      const timer = { at: now + ms, callback };
      timers.push(timer);
      return timer;
    },
    /** Moves time on, running the timers that fall due. */
    advance(ms: number) {
      now += ms;
      for (const timer of timers.filter((candidate) => candidate.at <= now)) {
        timers.splice(timers.indexOf(timer), 1);
        timer.callback();
      }
    },
    get pending() {
      return timers.length;
    },
  };
}

describe("PacedCluster", () => {
  afterEach(() => vi.restoreAllMocks());

  /** A paced client that never connects, whose refreshes (ioredis's own) the test ends by hand. */
  function pacedCluster(spacingMs: number) {
    const refreshes: Callback<void>[] = [];
    vi.spyOn(Cluster.prototype, "refreshSlotsCache").mockImplementation((callback?: Callback<void>) => {
      if (callback) refreshes.push(callback);
    });
    const clock = manualClock();
    const cluster = new PacedCluster([{ host: "127.0.0.1", port: 1 }], { lazyConnect: true }, spacingMs, clock);
    return { cluster, clock, refreshes };
  }

  it("asks for the first map at once, then for one map per spacing however often it is asked, answering every caller", () => {
    const { cluster, clock, refreshes } = pacedCluster(250);
    const answered: string[] = [];
    cluster.refreshSlotsCache(() => answered.push("first"));
    expect(refreshes).toHaveLength(1);
    clock.advance(40);
    refreshes[0]?.();
    expect(answered).toEqual(["first"]);

    // Asked again and again within the spacing (after redirections, failed commands): nothing yet.
    clock.advance(10);
    cluster.refreshSlotsCache(() => answered.push("a"));
    cluster.refreshSlotsCache();
    clock.advance(100);
    cluster.refreshSlotsCache(() => answered.push("b"));
    expect(refreshes).toHaveLength(1);
    expect(clock.pending).toBe(1);
    // The spacing since the last map has passed: one refresh answers all who asked.
    clock.advance(139);
    expect(refreshes).toHaveLength(1);
    clock.advance(1);
    expect(refreshes).toHaveLength(2);
    const error = new Error("all nodes failed");
    const errors: unknown[] = [];
    cluster.refreshSlotsCache((failure) => errors.push(failure));
    refreshes[1]?.(error);
    expect(answered).toEqual(["first", "a", "b"]);
    // A caller that asked while that refresh was being scheduled waits for the next one.
    expect(errors).toEqual([]);
    clock.advance(250);
    expect(refreshes).toHaveLength(3);
    refreshes[2]?.(error);
    expect(errors).toEqual([error]);
    // Long after: at once again.
    clock.advance(10_000);
    cluster.refreshSlotsCache();
    expect(refreshes).toHaveLength(4);
    expect(clock.pending).toBe(0);
  });

  it("leaves a refresh under way to ioredis, which answers a second caller with the same map", () => {
    const { cluster, refreshes } = pacedCluster(250);
    cluster.refreshSlotsCache();
    cluster.refreshSlotsCache();
    // ioredis's own refreshSlotsCache queues the second caller's callback on the refresh under way.
    expect(refreshes).toHaveLength(2);
  });
});
