import { describe, expect, it } from "vitest";
import { fallbackThreadStore, MemoryThreadStore, type ThreadStore } from "../../../../src/continuity/threads/thread-store.js";

describe("MemoryThreadStore", () => {
  it("forgets entries after their TTL", async () => {
    let now = 0;
    const store = new MemoryThreadStore(10, () => now);
    await store.set("a", "q1", 60);
    now = 59_000;
    expect(await store.get("a")).toBe("q1");
    now = 60_000;
    expect(await store.get("a")).toBeNull();
  });

  it("keeps at most its bound, pushing out the least recently used", async () => {
    const store = new MemoryThreadStore(3);
    for (const key of ["a", "b", "c"]) await store.set(key, `q-${key}`, 60);
    await store.get("a");
    await store.set("d", "q-d", 60);
    expect(store.size).toBe(3);
    expect(await store.get("b")).toBeNull();
    expect(await store.get("a")).toBe("q-a");
    expect(await store.get("d")).toBe("q-d");
  });
});

describe("fallbackThreadStore", () => {
  /** A shared store that fails while `down` is set. */
  function sharedStore() {
    const entries = new Map<string, string>();
    const state = { down: false };
    const store: ThreadStore = {
      get: async (key) => {
        if (state.down) throw new Error("Redis did not answer");
        return entries.get(key) ?? null;
      },
      set: async (key, queryId) => {
        if (state.down) throw new Error("Redis did not answer");
        entries.set(key, queryId);
      },
      close: async () => undefined,
    };
    return { store, entries, state };
  }

  it("answers from the shared store when it answers, even where the replica's memory differs", async () => {
    const shared = sharedStore();
    const store = fallbackThreadStore(shared.store, new MemoryThreadStore(10));
    await store.set("mine", "q1", 60);
    expect(shared.entries.get("mine")).toBe("q1");
    shared.entries.delete("mine");
    expect(await store.get("mine")).toBeNull();
  });

  it("falls back to what this replica wrote when the shared store fails, and rethrows when it knows nothing", async () => {
    const shared = sharedStore();
    const store = fallbackThreadStore(shared.store, new MemoryThreadStore(10));
    await store.set("mine", "q1", 60);
    shared.state.down = true;
    expect(await store.get("mine")).toBe("q1");
    await expect(store.get("elsewhere")).rejects.toThrow("Redis did not answer");
    // A write the shared store refused is still the replica's own.
    await expect(store.set("later", "q2", 60)).rejects.toThrow();
    expect(await store.get("later")).toBe("q2");
  });
});
