import { expect, it } from "vitest";
import { MemoryQueryOwnerStore, type QueryOwnerStore } from "../../../src/continuity/ownership/query-owner-store.js";
import { RedisQueryOwnerStore } from "../../../src/continuity/ownership/redis-query-owner-store.js";
import { describeOnBothBackends, redisOf, silentLogger, type StoreBackend } from "../../helpers/store-backends.js";

// Who started each workspace query (docs/governance.md#whose-query-it-is): one contract, kept by the
// in-process store and by the one in Redis alike; and what Redis gives back is parsed, never trusted.

function storeOn(backend: StoreBackend, maxEntries = 100): QueryOwnerStore {
  const { redis } = backend;
  return redis ? new RedisQueryOwnerStore(redis.gate, redis.keys, silentLogger) : new MemoryQueryOwnerStore(maxEntries, backend.now);
}

const ALICE = { principal: "alice-hash", workspace: "acme" };
const MALLORY = { principal: "mallory-hash", workspace: "acme" };

describeOnBothBackends("the query owner store", (backend, name) => {
  it("gives back who claimed a query, and null for one never claimed", async () => {
    const store = storeOn(backend());
    expect(await store.get("q-never")).toBeNull();
    expect(await store.claim("q-1", ALICE, 60)).toBe(true);
    expect(await store.get("q-1")).toEqual(ALICE);
  });

  it("never gives a claimed query to another principal, or to its owner in another workspace", async () => {
    const store = storeOn(backend());
    await store.claim("q-2", ALICE, 60);
    expect(await store.claim("q-2", MALLORY, 60)).toBe(false);
    expect(await store.claim("q-2", { ...ALICE, workspace: "globex" }, 60)).toBe(false);
    expect(await store.get("q-2")).toEqual(ALICE);
  });

  it("forgets a query its time to live after its last claim, each claim by its owner starting it over", async () => {
    const store = storeOn(backend());
    await store.claim("q-3", ALICE, 60);
    await backend().elapse(50);
    expect(await store.claim("q-3", ALICE, 60)).toBe(true);
    await backend().elapse(50);
    expect(await store.get("q-3")).toEqual(ALICE);
    await backend().elapse(11);
    expect(await store.get("q-3")).toBeNull();
    // Forgotten, a query is nobody's: whoever claims it next (the adapter only claims what it creates or was allowed to continue).
    expect(await store.claim("q-3", MALLORY, 60)).toBe(true);
  });

  if (name === "memory") {
    it("in memory, bounds each principal: one principal's flood of queries pushes out its own, never another's", async () => {
      const store = storeOn(backend(), 4);
      await store.claim("q-alice", ALICE, 60);
      for (let index = 0; index < 20; index += 1) await store.claim(`q-mallory-${index}`, MALLORY, 60);
      expect(await store.get("q-alice")).toEqual(ALICE);
      expect(await store.get("q-mallory-19")).toEqual(MALLORY);
      expect(await store.get("q-mallory-16")).toBeNull();
    });
    return;
  }

  it("gives back no owner from Redis that does not parse, rather than trust it", async () => {
    const redis = redisOf(backend());
    const store = storeOn(backend());
    await redis.server.client.set(redis.keys.queryOwner("q-bad"), JSON.stringify({ principal: 7, workspace: "acme" }));
    expect(await store.get("q-bad")).toBeNull();
    await redis.server.client.set(redis.keys.queryOwner("q-bad"), "{not json");
    expect(await store.get("q-bad")).toBeNull();
    // What it does not understand is nobody's to take over.
    expect(await store.claim("q-bad", MALLORY, 60)).toBe(false);
  });
});
