import { expect, it } from "vitest";
import { RedisResponseStore } from "../../../src/continuity/responses/redis-response-store.js";
import { MemoryResponseStore, type ResponseStore, type StoredEntry } from "../../../src/continuity/responses/response-store.js";
import { type StoredValue, storedValueSchema } from "../../../src/dialects/responses/stored-value.js";
import { ResponseStreamEncoder } from "../../../src/dialects/responses/response-stream-encoder.js";
import { metaOf } from "../../../src/dialects/responses/response-meta.js";
import { describeOnBothBackends, redisOf, silentLogger, type StoreBackend } from "../../helpers/store-backends.js";

// Stored responses' store (docs/responses-api.md): one contract, kept by the in-process store and by
// the one in Redis alike; and what Redis gives back is parsed, never trusted.

function storeOn(backend: StoreBackend): ResponseStore<StoredValue> {
  const { redis } = backend;
  return redis ? new RedisResponseStore(redis.gate, redis.keys, silentLogger, storedValueSchema) : new MemoryResponseStore(100, backend.now);
}

/** A finished response as the Responses route stores it. */
function entry(id: string, principal = "hash"): StoredEntry<StoredValue> {
  const meta = metaOf(id, { model: "ask", input: "How much leave?" }, 1_700_000_000, null);
  const encoder = new ResponseStreamEncoder(meta, () => 1_700_000_001);
  encoder.open();
  encoder.encode({ type: "text", choice: 0, text: "25 days." });
  encoder.encode({ type: "cited", choice: 0, citations: [], sources: [] });
  encoder.close({ promptTokens: 4, completionTokens: 3, reasoningTokens: 0 });
  const response = encoder.finished;
  if (!response || !encoder.usage) throw new Error("the encoder did not finish");
  const value = { response, input: [{ id: `in_${id}`, type: "message", role: "user" }], meta, answer: encoder.answer, usage: encoder.usage };
  return { id, principal, workspace: "acme", queryId: `q-${id}`, itemIds: response.output.map((item) => item.id), value };
}

describeOnBothBackends("the response store", (backend, name) => {
  it("gives back what was put, by its id and by each of its items' ids, and null for what was not", async () => {
    const store = storeOn(backend());
    const stored = entry("resp_put");
    await store.put(stored, 60);
    expect(await store.get("resp_put")).toEqual(stored);
    expect(stored.itemIds).toEqual(["msg_put"]);
    expect(await store.findByItem("msg_put")).toEqual(stored);
    expect(await store.get("resp_other")).toBeNull();
    expect(await store.findByItem("msg_other")).toBeNull();
  });

  it("deletes a response with its items, once", async () => {
    const store = storeOn(backend());
    await store.put(entry("resp_gone"), 60);
    expect(await store.delete("resp_gone")).toBe(true);
    expect(await store.get("resp_gone")).toBeNull();
    expect(await store.findByItem("msg_gone")).toBeNull();
    expect(await store.delete("resp_gone")).toBe(false);
  });

  it("forgets a response and its items their time to live after they were put", async () => {
    const store = storeOn(backend());
    await store.put(entry("resp_ttl"), 60);
    await backend().elapse(59);
    expect((await store.get("resp_ttl"))?.id).toBe("resp_ttl");
    await backend().elapse(2);
    expect(await store.get("resp_ttl")).toBeNull();
    expect(await store.findByItem("msg_ttl")).toBeNull();
  });

  if (name !== "redis") {
    it("in memory, bounds each principal: one principal's flood of responses pushes out its own, never another's", async () => {
      const store = new MemoryResponseStore(4, backend().now);
      await store.put(entry("resp_alice", "alice"), 60);
      for (let index = 0; index < 20; index += 1) await store.put(entry(`resp_m${index}`, "mallory"), 60);
      expect((await store.get("resp_alice"))?.principal).toBe("alice");
      expect(await store.findByItem("msg_alice")).not.toBeNull();
      expect((await store.get("resp_m19"))?.principal).toBe("mallory");
      expect(await store.get("resp_m16")).toBeNull();
      expect(await store.findByItem("msg_m16")).toBeNull();
    });
    return;
  }

  it("gives back nothing for an entry in Redis that does not parse, rather than trust it", async () => {
    const redis = redisOf(backend());
    const store = storeOn(backend());
    const good = entry("resp_bad");
    await redis.server.client.set(redis.keys.response("resp_bad"), JSON.stringify({ ...good, itemIds: "msg_bad" }));
    await redis.server.client.set(redis.keys.responseItem("msg_bad"), "resp_bad");
    expect(await store.get("resp_bad")).toBeNull();
    expect(await store.findByItem("msg_bad")).toBeNull();
    await redis.server.client.set(redis.keys.response("resp_bad"), "{not json");
    expect(await store.get("resp_bad")).toBeNull();
    const { value: _value, ...withoutValue } = good;
    await redis.server.client.set(redis.keys.response("resp_bad"), JSON.stringify(withoutValue));
    expect(await store.get("resp_bad")).toBeNull();
    // Deleting it removes it (it would otherwise stay until its TTL), and says so once.
    expect(await store.delete("resp_bad")).toBe(true);
    expect(await redis.server.client.exists(redis.keys.response("resp_bad"))).toBe(0);
    expect(await store.delete("resp_bad")).toBe(false);
  });
});
