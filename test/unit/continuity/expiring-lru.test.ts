import { describe, expect, it } from "vitest";
import { ExpiringLru } from "../../../src/continuity/expiring-lru.js";

// The one bounded, expiring map behind every continuity store in memory (docs/architecture/continuity.md#the-stores).

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

  it("with owners, pushes out the oldest entry of whoever holds the most, so that one owner's flood evicts only its own", () => {
    const lru = new ExpiringLru<string>({ maxEntries: 4, now: () => 0, ownerOf: (value) => value.split(":")[0] as string });
    lru.set("a1", "alice:1", 60);
    lru.set("b1", "bob:1", 60);
    for (let index = 1; index <= 10; index += 1) lru.set(`m${index}`, `mallory:${index}`, 60);
    expect([lru.get("a1"), lru.get("b1"), lru.get("m9"), lru.get("m10"), lru.get("m8")]).toEqual(["alice:1", "bob:1", "mallory:9", "mallory:10", undefined]);
    // Alice writing now, as many as Mallory once it is in: Mallory got there first, so hers goes, not Bob's older one.
    lru.set("a2", "alice:2", 60);
    expect([lru.get("b1"), lru.get("a1"), lru.get("a2"), lru.get("m10"), lru.get("m9")]).toEqual(["bob:1", "alice:1", "alice:2", "mallory:10", undefined]);
    expect(lru.size).toBe(4);
  });

  it("with owners, ties go to the owner that reached the count first, reads reorder an owner's own, and a deleted or expired entry leaves its count", () => {
    let now = 0;
    const ownerOf = (value: string) => value.split(":")[0] as string;
    const lru = new ExpiringLru<string>({ maxEntries: 4, now: () => now, ownerOf, order: "recently-used" });
    lru.set("a1", "alice:1", 60);
    lru.set("b1", "bob:1", 60);
    lru.set("a2", "alice:2", 10);
    lru.set("b2", "bob:2", 60);
    lru.set("c1", "carol:1", 60);
    expect([lru.get("a1"), lru.get("a2"), lru.get("b1"), lru.get("b2"), lru.get("c1")]).toEqual([undefined, "alice:2", "bob:1", "bob:2", "carol:1"]);
    // Bob and Carol hold two each once Carol writes again: Bob got there first, and b2 is his least recently used (b1 was read since).
    lru.get("b1");
    lru.set("c2", "carol:2", 60);
    expect([lru.get("b2"), lru.get("b1"), lru.get("c1"), lru.get("c2")]).toEqual([undefined, "bob:1", "carol:1", "carol:2"]);
    now = 11_000;
    expect(lru.get("a2")).toBeUndefined();
    expect(lru.delete("b1")).toBe(true);
    // Carol holds two, Dave three by his third write: his own oldest goes.
    for (const key of ["d1", "d2", "d3"]) lru.set(key, `dave:${key}`, 60);
    expect([lru.get("c1"), lru.get("c2"), lru.get("d1"), lru.get("d2"), lru.get("d3")]).toEqual(["carol:1", "carol:2", undefined, "dave:d2", "dave:d3"]);
  });
});
