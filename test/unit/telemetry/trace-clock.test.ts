import { afterEach, describe, expect, it, vi } from "vitest";
import { clockNow, epochTime } from "../../../src/telemetry/recorded-span.js";

/** Makes `performance.now()` and `Date.now()` answer these readings, in the order they are read. */
function clocks(performanceReadings: number[], wallReadings: number[]): void {
  vi.spyOn(performance, "now").mockImplementation(() => performanceReadings.shift() ?? Number.NaN);
  vi.spyOn(Date, "now").mockImplementation(() => wallReadings.shift() ?? Number.NaN);
}

describe("a trace clock", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("anchors the wall clock to the middle of two close performance readings", () => {
    clocks([1000, 1000.02], [1_795_000_000_000]);
    expect(clockNow()).toEqual({ epochMs: 1_795_000_000_000, at: 1000.01 });
  });

  it("reads again when the thread was held up between its reads, and keeps the narrowest reading", () => {
    // The first reading spans 10 ms (a thread descheduled): its times would be up to 10 ms off.
    clocks([1000, 1010, 1010.5, 1010.52], [1_795_000_000_000, 1_795_000_000_010]);
    const clock = clockNow();
    expect(clock).toEqual({ epochMs: 1_795_000_000_010, at: 1010.51 });
    // A time on this clock maps to the wall clock the second reading saw.
    expect(epochTime(clock, 1010.51)).toEqual([1_795_000_000, 10_000_000]);
  });

  it("reads at most three times, keeping the narrowest of them", () => {
    clocks([0, 9, 20, 22, 30, 35], [1_000_000, 1_000_020, 1_000_030]);
    expect(clockNow()).toEqual({ epochMs: 1_000_020, at: 21 });
  });
});
