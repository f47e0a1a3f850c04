import { expect, it } from "vitest";
import { type BackgroundStore, MemoryBackgroundStore, UNNUMBERED } from "../../../src/continuity/background/background-store.js";
import { RedisBackgroundStore } from "../../../src/continuity/background/redis-background-store.js";
import { describeOnBothBackends, redisOf, silentLogger, type StoreBackend } from "../../helpers/store-backends.js";

// Background responses' store (docs/responses-api.md#background-mode): one contract, kept by the
// in-process store and by the one in Redis alike (which any replica reads, follows and cancels);
// and what Redis gives back is parsed, never trusted.

function storeOn(backend: StoreBackend): BackgroundStore {
  const { redis } = backend;
  return redis ? new RedisBackgroundStore(redis.gate, redis.keys, silentLogger) : new MemoryBackgroundStore(100, backend.now);
}

const record = (id: string) => ({ id, principal: "p", workspace: "w", queryId: "q", response: { status: "in_progress" }, resume: { turn: "opaque" } });
const frame = (n: number, type = "response.output_text.delta") => ({ event: type, data: { type, sequence_number: n } });
const numbers = (frames: { data: unknown }[]) => frames.map((entry) => (entry.data as { sequence_number: number }).sequence_number);

describeOnBothBackends("the background store", (backend, name) => {
  it("keeps the record as created, its state included, and null for an id never created", async () => {
    const store = storeOn(backend());
    await store.create(record("resp_rec"), 60);
    expect(await store.get("resp_rec")).toEqual(record("resp_rec"));
    expect(await store.get("resp_none")).toBeNull();
    expect(await store.ended("resp_none")).toBe(true);
  });

  it("appends until the response ends, numbers an unnumbered terminal frame, and appends nothing after", async () => {
    const store = storeOn(backend());
    await store.create(record("resp_a"), 60);
    expect(await store.append("resp_a", [frame(0), frame(1)], 60, "me")).toBe(true);
    expect(await store.ended("resp_a")).toBe(false);
    const cancelled = { event: "response.incomplete", data: { type: "response.incomplete", sequence_number: UNNUMBERED } };
    expect(await store.end("resp_a", { status: "cancelled" }, [cancelled], 60)).toBe(true);
    expect(await store.end("resp_a", { status: "completed" }, [frame(3)], 60)).toBe(false);
    expect(await store.append("resp_a", [frame(3)], 60, "me")).toBe(false);
    expect(numbers(await store.events("resp_a", 0))).toEqual([1, 2]);
    expect((await store.events("resp_a", -1)).map((entry) => entry.event)).toEqual(["response.output_text.delta", "response.output_text.delta", "response.incomplete"]);
    expect(await store.size("resp_a")).toBe(3);
    expect(await store.ended("resp_a")).toBe(true);
    expect((await store.get("resp_a"))?.response.status).toBe("cancelled");
  });

  it("refuses an append from a replica that lost the lease, and lends a lapsed lease to another", async () => {
    const store = storeOn(backend());
    await store.create(record("resp_b"), 60);
    expect(await store.lease("resp_b", "one", 1000)).toBe(true);
    expect(await store.lease("resp_b", "one", 1000)).toBe(true);
    expect(await store.lease("resp_b", "two", 1000)).toBe(false);
    expect(await store.append("resp_b", [frame(0)], 60, "two")).toBe(false);
    await backend().elapse(1.5);
    expect(await store.lease("resp_b", "two", 1000)).toBe(true);
    expect(await store.append("resp_b", [frame(0)], 60, "one")).toBe(false);
    expect(await store.append("resp_b", [frame(0)], 60, "two")).toBe(true);
    expect(await store.lease("resp_none", "one", 1000)).toBe(false);
  });

  it("refuses an append of no frames as it refuses any: from a replica that does not hold the lease, or after the end", async () => {
    const store = storeOn(backend());
    await store.create(record("resp_e"), 60);
    expect(await store.append("resp_e", [], 60, "one")).toBe(true);
    expect(await store.lease("resp_e", "one", 1000)).toBe(true);
    expect(await store.append("resp_e", [], 60, "one")).toBe(true);
    expect(await store.append("resp_e", [], 60, "two")).toBe(false);
    expect(await store.end("resp_e", { status: "completed" }, [frame(0, "response.completed")], 60)).toBe(true);
    expect(await store.append("resp_e", [], 60, "one")).toBe(false);
    expect(await store.append("resp_none", [], 60, "one")).toBe(false);
    expect(await store.size("resp_e")).toBe(1);
  });

  it("forgets a response its time to live after its last change, and deletes one once", async () => {
    const store = storeOn(backend());
    await store.create(record("resp_c"), 60);
    await backend().elapse(50);
    expect(await store.append("resp_c", [frame(0)], 60, "me")).toBe(true);
    await backend().elapse(50);
    expect((await store.get("resp_c"))?.id).toBe("resp_c");
    expect(await store.size("resp_c")).toBe(1);
    await backend().elapse(11);
    expect(await store.get("resp_c")).toBeNull();
    expect(await store.size("resp_c")).toBe(0);
    await store.create(record("resp_d"), 60);
    expect(await store.delete("resp_d")).toBe(true);
    expect(await store.get("resp_d")).toBeNull();
    expect(await store.delete("resp_d")).toBe(false);
  });

  if (name === "redis") {
    it("in Redis, runs its scripts by their digest, and sends one again that Redis forgot (a restart, a failover)", async () => {
      const { server } = redisOf(backend());
      const store = storeOn(backend());
      await store.create(record("resp_f"), 60);
      expect(await store.lease("resp_f", "one", 1000)).toBe(true);
      await server.client.script("FLUSH");
      expect(await store.lease("resp_f", "one", 1000)).toBe(true);
      expect(await store.append("resp_f", [frame(0)], 60, "one")).toBe(true);
      expect(await store.append("resp_f", [frame(1)], 60, "two")).toBe(false);
      expect(await store.end("resp_f", { status: "completed" }, [frame(UNNUMBERED, "response.completed")], 60)).toBe(true);
      expect(numbers(await store.events("resp_f", -1))).toEqual([0, 1]);
      const infos = (await server.client.info("commandstats")).split("\n");
      expect(infos.some((line) => line.startsWith("cmdstat_evalsha:"))).toBe(true);
    });
  }

  if (name !== "redis") {
    it("in memory, bounds each principal: one principal's flood of background answers and tasks pushes out its own, never another's", async () => {
      const store = new MemoryBackgroundStore(4, backend().now);
      await store.create({ ...record("task_alice"), principal: "alice" }, 60);
      for (let index = 0; index < 20; index += 1) await store.create({ ...record(`resp_m${index}`), principal: "mallory" }, 60);
      expect((await store.get("task_alice"))?.principal).toBe("alice");
      expect((await store.get("resp_m19"))?.principal).toBe("mallory");
      expect(await store.get("resp_m16")).toBeNull();
    });
    return;
  }

  it("gives back no record from Redis that does not parse, and no event that does not parse, rather than trust them", async () => {
    const redis = redisOf(backend());
    const store = storeOn(backend());
    await store.create(record("resp_bad"), 60);
    expect(await store.append("resp_bad", [frame(0), frame(1)], 60, "me")).toBe(true);
    await redis.server.client.lset(redis.keys.background("resp_bad", "events"), 0, "{\"type\":\"response.created\"}");
    expect(numbers(await store.events("resp_bad", -1))).toEqual([1]);
    await redis.server.client.set(redis.keys.background("resp_bad", "record"), JSON.stringify({ ...record("resp_bad"), response: "in_progress" }));
    expect(await store.get("resp_bad")).toBeNull();
    expect(await store.end("resp_bad", { status: "failed" }, [frame(UNNUMBERED, "response.failed")], 60)).toBe(false);
    await redis.server.client.set(redis.keys.background("resp_bad", "record"), "not json");
    expect(await store.get("resp_bad")).toBeNull();
  });
});
