import { describe, expect, it } from "vitest";
import { nextPollDelay, type PacedWaiter, type PollPace } from "../../../src/upstream/poll-pace.js";

const interval = { minMs: 100, maxMs: 2000 };
const waiter = (since: number, pace: PollPace = "normal"): PacedWaiter => ({ since, pace: () => pace });

describe("the poll pace", () => {
  it("polls a new query at the shortest interval, and an older one at a quarter of its age, up to the longest", () => {
    expect(nextPollDelay(interval, 1000, 0, [waiter(1000)])).toBe(100);
    expect(nextPollDelay(interval, 3000, 0, [waiter(1000)])).toBe(500);
    expect(nextPollDelay(interval, 100_000, 0, [waiter(0)])).toBe(2000);
  });

  it("follows the youngest normal waiter", () => {
    expect(nextPollDelay(interval, 10_000, 0, [waiter(0), waiter(8000), waiter(2000)])).toBe(500);
  });

  it("polls at once for an urgent waiter, and at the longest interval when every channel is relaxed", () => {
    expect(nextPollDelay(interval, 10_000, 0, [waiter(0), waiter(0, "urgent")])).toBe(100);
    expect(nextPollDelay(interval, 10_000, 0, [waiter(9999, "relaxed"), waiter(9999, "relaxed")])).toBe(2000);
    expect(nextPollDelay(interval, 10_000, 0, [])).toBe(2000);
  });

  it("doubles the delay per consecutive failure, 32× at most, never beyond the longest interval", () => {
    expect(nextPollDelay(interval, 0, 1, [waiter(0)])).toBe(200);
    expect(nextPollDelay(interval, 0, 3, [waiter(0)])).toBe(800);
    expect(nextPollDelay(interval, 0, 9, [waiter(0)])).toBe(2000);
    expect(nextPollDelay({ minMs: 10, maxMs: 100_000 }, 0, 9, [waiter(0)])).toBe(320);
  });

  it("asks each waiter its pace at the given time", () => {
    const asked: number[] = [];
    nextPollDelay(interval, 1234, 0, [{ since: 0, pace: (now) => (asked.push(now), "normal") }]);
    expect(asked).toEqual([1234]);
  });
});
