import { expect, it } from "vitest";
import { RedisThreadStore } from "../../../src/continuity/threads/redis-thread-store.js";
import { MemoryThreadStore, type ThreadStore } from "../../../src/continuity/threads/thread-store.js";
import { describeOnBothBackends, type StoreBackend } from "../../helpers/store-backends.js";

// The thread memory's store (docs/architecture/continuity.md#conversations): one contract, kept by the
// in-process store and by the one in Redis alike.

function storeOn(backend: StoreBackend): ThreadStore {
  const { redis } = backend;
  return redis ? new RedisThreadStore(redis.gate, redis.keys) : new MemoryThreadStore(100, backend.now);
}

describeOnBothBackends("the thread store", (backend) => {
  it("gives back the query id a key was set to, the latest one, and null for a key never set", async () => {
    const store = storeOn(backend());
    expect(await store.get("h:never")).toBeNull();
    await store.set("h:one", "q-1", 60);
    expect(await store.get("h:one")).toBe("q-1");
    await store.set("h:one", "q-2", 60);
    expect(await store.get("h:one")).toBe("q-2");
  });

  it("forgets a key its time to live after it was set, and not before", async () => {
    const store = storeOn(backend());
    await store.set("h:ttl", "q-1", 60);
    await backend().elapse(59);
    expect(await store.get("h:ttl")).toBe("q-1");
    await backend().elapse(2);
    expect(await store.get("h:ttl")).toBeNull();
  });

  it("keeps keys apart", async () => {
    const store = storeOn(backend());
    await Promise.all([store.set("h:a", "q-a", 60), store.set("c:a", "q-c", 60)]);
    expect([await store.get("h:a"), await store.get("c:a")]).toEqual(["q-a", "q-c"]);
  });
});
