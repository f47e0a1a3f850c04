import { describe, expect, it } from "vitest";
import { MemoryConversationStore } from "../../src/stores/conversation-store.js";

describe("MemoryConversationStore", () => {
  it("forgets entries after their TTL", async () => {
    let now = 0;
    const store = new MemoryConversationStore(10, () => now);
    await store.set("a", "q1", 60);
    now = 59_000;
    expect(await store.get("a")).toBe("q1");
    now = 60_000;
    expect(await store.get("a")).toBeNull();
  });

  it("keeps at most its bound, pushing out the least recently used", async () => {
    const store = new MemoryConversationStore(3);
    for (const key of ["a", "b", "c"]) await store.set(key, `q-${key}`, 60);
    await store.get("a");
    await store.set("d", "q-d", 60);
    expect(store.size).toBe(3);
    expect(await store.get("b")).toBeNull();
    expect(await store.get("a")).toBe("q-a");
    expect(await store.get("d")).toBe("q-d");
  });
});
