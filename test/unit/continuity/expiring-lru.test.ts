import { describe, expect, it } from "vitest";
import { ExpiringLru } from "../../../src/continuity/expiring-lru.js";

// The one bounded, expiring map behind every continuity store in memory (docs/architecture.md#continuity).

describe("ExpiringLru", () => {
  it("gives a value back until its time to live is over, and extends a live one without moving it", () => {
    let now = 0;
    const lru = new ExpiringLru<string>({ maxEntries: 10, now: () => now });
    lru.set("a", "one", 60);
    now = 59_999;
    expect(lru.get("a")).toBe("one");
    expect(lru.expire("a", 60)).toBe(true);
    now = 119_998;
    expect(lru.get("a")).toBe("one");
    now = 119_999;
    expect(lru.get("a")).toBeUndefined();
    expect(lru.expire("a", 60)).toBe(false);
    expect(lru.size).toBe(0);
  });

  it("pushes out the oldest written beyond its bound, a read not counting unless it orders by use", () => {
    const written = new ExpiringLru<string>({ maxEntries: 2, now: () => 0 });
    written.set("a", "1", 60);
    written.set("b", "2", 60);
    written.get("a");
    written.set("c", "3", 60);
    expect([written.get("a"), written.get("b"), written.get("c")]).toEqual([undefined, "2", "3"]);
    const used = new ExpiringLru<string>({ maxEntries: 2, now: () => 0, order: "recently-used" });
    used.set("a", "1", 60);
    used.set("b", "2", 60);
    used.get("a");
    used.set("c", "3", 60);
    expect([used.get("a"), used.get("b"), used.get("c")]).toEqual(["1", undefined, "3"]);
  });

  it("tells of every entry that leaves — pushed out, expired, replaced, deleted — and a delete only of a live one", () => {
    let now = 0;
    const removed: string[] = [];
    const lru = new ExpiringLru<string>({ maxEntries: 2, now: () => now, onRemove: (key, value) => removed.push(`${key}=${value}`) });
    lru.set("a", "1", 60);
    lru.set("a", "2", 60);
    lru.set("b", "3", 10);
    lru.set("c", "4", 60);
    now = 10_000;
    expect(lru.get("b")).toBeUndefined();
    expect(lru.delete("c")).toBe(true);
    expect(lru.delete("c")).toBe(false);
    expect(removed).toEqual(["a=1", "a=2", "b=3", "c=4"]);
  });
});
