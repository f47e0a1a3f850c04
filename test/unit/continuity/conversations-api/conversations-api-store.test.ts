import { describe, expect, it } from "vitest";
import { MemoryConversationsApiStore } from "../../../../src/continuity/conversations-api/conversations-api-store.js";

// The in-process store of the Conversations API (docs/responses-api.md#conversations).

const record = (id: string) => ({ id, principal: "p", workspace: "w", createdAt: 1, metadata: {}, queryId: `q-${id}` });
const item = (id: string) => ({ id, type: "message", role: "user", content: [{ type: "input_text", text: id }] });

describe("MemoryConversationsApiStore", () => {
  it("keeps items in order, at most maxItems (the oldest go first), and deletes one by id", async () => {
    const store = new MemoryConversationsApiStore(10, 3, () => 0);
    await store.create(record("conv_a"), [item("one"), item("two")], 60);
    expect(await store.append("conv_a", [item("three"), item("four")], 60)).toBe(true);
    expect((await store.items("conv_a")).map((entry) => entry.id)).toEqual(["two", "three", "four"]);
    expect(await store.deleteItem("conv_a", "three")).toBe(true);
    expect(await store.deleteItem("conv_a", "three")).toBe(false);
    expect((await store.items("conv_a")).map((entry) => entry.id)).toEqual(["two", "four"]);
    expect(await store.append("conv_missing", [item("x")], 60)).toBe(false);
  });

  it("forgets a conversation its TTL after the last change, and the least recently changed beyond its bound", async () => {
    let now = 0;
    const store = new MemoryConversationsApiStore(2, 10, () => now);
    await store.create(record("conv_a"), [], 60);
    await store.create(record("conv_b"), [], 60);
    now = 30_000;
    expect(await store.update({ ...record("conv_a"), metadata: { k: "v" } }, 60)).toBe(true);
    await store.create(record("conv_c"), [], 60);
    expect(await store.get("conv_b")).toBeNull();
    expect((await store.get("conv_a"))?.metadata).toEqual({ k: "v" });
    now = 90_001;
    expect(await store.get("conv_a")).toBeNull();
    expect(await store.get("conv_c")).toBeNull();
    expect(await store.update(record("conv_a"), 60)).toBe(false);
  });
});
