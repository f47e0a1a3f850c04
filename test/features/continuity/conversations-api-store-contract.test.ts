import { expect, it } from "vitest";
import { type ConversationsApiStore, MemoryConversationsApiStore } from "../../../src/continuity/conversations-api/conversations-api-store.js";
import { RedisConversationsApiStore } from "../../../src/continuity/conversations-api/redis-conversations-api-store.js";
import { describeOnBothBackends, redisOf, silentLogger, type StoreBackend } from "../../helpers/store-backends.js";

// The Conversations API's store (docs/responses-api.md#conversations): one contract, kept by the
// in-process store and by the one in Redis alike; and what Redis gives back is parsed, never trusted.

/** A store that keeps at most 3 items per conversation. */
function storeOn(backend: StoreBackend): ConversationsApiStore {
  const { redis } = backend;
  return redis ? new RedisConversationsApiStore(redis.gate, redis.keys, 3, silentLogger) : new MemoryConversationsApiStore(100, 3, backend.now);
}

const record = (id: string) => ({ id, principal: "p", workspace: "w", createdAt: 1, metadata: {}, queryId: `q-${id}` });
const item = (id: string) => ({ id, type: "message", role: "user", content: [{ type: "input_text", text: id }] });
const ids = (items: { id: string }[]) => items.map((entry) => entry.id);

describeOnBothBackends("the Conversations API's store", (backend, name) => {
  it("keeps items in order, at most maxItems (the oldest go first), and deletes one by id", async () => {
    const store = storeOn(backend());
    await store.create(record("conv_a"), [item("one"), item("two")], 60);
    expect(await store.get("conv_a")).toEqual(record("conv_a"));
    expect(await store.append("conv_a", [item("three"), item("four")], 60)).toBe(true);
    expect(await store.items("conv_a")).toEqual([item("two"), item("three"), item("four")]);
    expect(await store.deleteItem("conv_a", "three")).toBe(true);
    expect(await store.deleteItem("conv_a", "three")).toBe(false);
    expect(ids(await store.items("conv_a"))).toEqual(["two", "four"]);
    expect(await store.append("conv_missing", [item("x")], 60)).toBe(false);
    expect(await store.get("conv_missing")).toBeNull();
    expect(await store.items("conv_missing")).toEqual([]);
  });

  it("replaces a conversation's record while it exists, and deletes it with its items once", async () => {
    const store = storeOn(backend());
    await store.create(record("conv_b"), [item("one")], 60);
    expect(await store.update({ ...record("conv_b"), metadata: { k: "v" } }, 60)).toBe(true);
    expect((await store.get("conv_b"))?.metadata).toEqual({ k: "v" });
    expect(await store.delete("conv_b")).toBe(true);
    expect(await store.get("conv_b")).toBeNull();
    expect(await store.items("conv_b")).toEqual([]);
    expect(await store.delete("conv_b")).toBe(false);
    expect(await store.update(record("conv_b"), 60)).toBe(false);
  });

  it("forgets a conversation and its items its time to live after the last change", async () => {
    const store = storeOn(backend());
    await store.create(record("conv_c"), [item("one")], 60);
    await backend().elapse(50);
    expect(await store.append("conv_c", [item("two")], 60)).toBe(true);
    await backend().elapse(50);
    expect(ids(await store.items("conv_c"))).toEqual(["one", "two"]);
    await backend().elapse(11);
    expect(await store.get("conv_c")).toBeNull();
    expect(await store.items("conv_c")).toEqual([]);
  });

  if (name !== "redis") return;

  it("gives back no record or item from Redis that does not parse, rather than trust it", async () => {
    const redis = redisOf(backend());
    const store = storeOn(backend());
    await store.create(record("conv_bad"), [item("one"), item("two")], 60);
    await redis.server.client.lset(redis.keys.apiConversation("conv_bad", "items"), 0, JSON.stringify({ type: "message" }));
    expect(ids(await store.items("conv_bad"))).toEqual(["two"]);
    expect(await store.deleteItem("conv_bad", "two")).toBe(true);
    await redis.server.client.set(redis.keys.apiConversation("conv_bad", "record"), JSON.stringify({ ...record("conv_bad"), principal: 7 }));
    expect(await store.get("conv_bad")).toBeNull();
  });
});
