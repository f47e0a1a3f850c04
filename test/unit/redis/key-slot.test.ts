import { describe, expect, it } from "vitest";
import { keySlot } from "../../../src/redis/key-slot.js";

describe("a key's cluster slot", () => {
  it("is CRC16 (XMODEM) of the key modulo 16384, as Redis computes it", () => {
    // The specification's check value: CRC16("123456789") = 0x31C3.
    expect(keySlot("123456789")).toBe(0x31c3);
    // CLUSTER KEYSLOT foo / bar on a real cluster.
    expect(keySlot("foo")).toBe(12182);
    expect(keySlot("bar")).toBe(5061);
  });

  it("hashes only the first non-empty hash tag", () => {
    expect(keySlot("{user1000}.following")).toBe(keySlot("user1000"));
    expect(keySlot("prefix:{h:acme}:lease")).toBe(keySlot("limit:{h:acme}:slots"));
    expect(keySlot("foo{}{bar}")).toBe(keySlot("foo{}{bar}"));
    expect(keySlot("foo{}{bar}")).not.toBe(keySlot("bar"));
    expect(keySlot("foo{{bar}}zap")).toBe(keySlot("{bar"));
    expect(keySlot("foo{bar}{zap}")).toBe(keySlot("bar"));
  });

  it("stays within the 16384 slots", () => {
    for (const key of ["", "a", "workspace-openai-adapter:response:resp_0123456789abcdef", "é✓"]) {
      expect(keySlot(key)).toBeGreaterThanOrEqual(0);
      expect(keySlot(key)).toBeLessThan(16384);
    }
  });
});
