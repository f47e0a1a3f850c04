import { describe, expect, it } from "vitest";
import { keySlot, slotMaster } from "../../../src/redis/key-slot.js";

describe("a key's cluster slot", () => {
  it("is the slot Redis gives the key (CLUSTER KEYSLOT on a real redis-server)", () => {
    expect(keySlot("123456789")).toBe(12739);
    expect(keySlot("foo")).toBe(12182);
    expect(keySlot("bar")).toBe(5061);
    expect(keySlot("é✓")).toBe(9318);
    expect(keySlot("")).toBe(0);
  });

  it("hashes only the first hash tag, as the adapter's keys carry one", () => {
    // The adapter's tags are never empty (REDIS_KEY_PREFIX refuses braces; ids are not empty), the one
    // case where cluster-key-slot and Redis part ("foo{}{bar}").
    expect(keySlot("{user1000}.following")).toBe(keySlot("user1000"));
    expect(keySlot("prefix:{h:acme}:lease")).toBe(keySlot("limit:{h:acme}:slots"));
    expect(keySlot("foo{{bar}}zap")).toBe(4015);
    expect(keySlot("foo{bar}{zap}")).toBe(5061);
  });

  it("finds the master of a key's slot in a slot map", () => {
    const slots: (string[] | undefined)[] = [];
    slots[keySlot("foo")] = ["127.0.0.1:7001", "127.0.0.1:7004"];
    expect(slotMaster(slots, "foo")).toBe("127.0.0.1:7001");
    expect(slotMaster(slots, "bar")).toBeUndefined();
  });
});
