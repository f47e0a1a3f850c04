import pino from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type FallbackReason, RedisLimitCounters } from "../../../src/limits/redis-limit-counters.js";
import { redisKeys } from "../../../src/redis/keys.js";
import { openRedis } from "../../../src/redis/redis-connection.js";
import { describeWith, REDIS } from "../../helpers/external-programs.js";
import { freePort, type RedisServer, startRedis } from "../../helpers/redis-server.js";
import { waitFor } from "../../helpers/wait-for.js";

/** The part of a key Redis Cluster hashes: the first non-empty `{…}`, else the whole key. */
function hashTag(key: string): string {
  const open = key.indexOf("{");
  const close = open < 0 ? -1 : key.indexOf("}", open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

/** A logger that keeps its lines, to check what is said once. */
function recordingLogger() {
  const lines: string[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line).msg as string) });
  return { logger, lines };
}

describeWith(REDIS, "rate limits counted in Redis", () => {
  let redis: RedisServer;
  const opened: RedisLimitCounters[] = [];
  const connections: ReturnType<typeof openRedis>[] = [];

  /** Counters as one replica has them: a connection of their own. */
  async function replica(prefix: string, options: { slotTtlMs?: number; url?: string; windowSeconds?: number; commandTimeoutMs?: number } = {}) {
    const connection = openRedis({ kind: "single", url: options.url ?? redis.url }, { commandTimeoutMs: options.commandTimeoutMs ?? 1000 });
    connections.push(connection);
    if (connection.status !== "ready") await new Promise((resolve) => connection.once("ready", resolve));
    const { logger, lines } = recordingLogger();
    const reasons: FallbackReason[] = [];
    const counters = new RedisLimitCounters({
      redis: connection,
      keys: redisKeys(prefix),
      windowSeconds: options.windowSeconds ?? 60,
      slotTtlMs: options.slotTtlMs ?? 30_000,
      logger,
      onFallback: (reason) => reasons.push(reason),
    });
    opened.push(counters);
    return { counters, connection, lines, fallbacks: () => reasons.length, reasons };
  }

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await Promise.all(opened.map((counters) => counters.close()));
    for (const connection of connections) connection.disconnect();
    await redis?.stop();
  });

  it("counts one key's requests across replicas, each key and workspace apart, under one hash tag per key and workspace", async () => {
    const prefix = `limits-share-${process.pid}:`;
    const [first, second] = [await replica(prefix), await replica(prefix)];
    const counted = [];
    for (let index = 0; index < 5; index += 1) counted.push(await (index % 2 ? second : first).counters.countRequest("{h1:acme}", 4));
    expect(counted.map((count) => [count.counted, count.used])).toEqual([[true, 1], [true, 2], [true, 3], [true, 4], [false, 5]]);
    expect((await second.counters.countRequest("{h2:acme}", 4)).used).toBe(1);
    expect((await second.counters.countRequest("{h1:globex}", 4)).used).toBe(1);
    first.counters.chargeTokens("{h1:acme}", 1000, 250); // written in the background
    await waitFor(async () => (await second.counters.tokensUsed("{h1:acme}", 1000)).used === 250, "the charged tokens on the other replica");
    const slot = await first.counters.takeSlot("{h1:acme}", 2);
    expect(slot).not.toBeNull();

    const keys = await redis.client.keys(`${prefix}*`);
    expect(keys.sort()).toEqual(
      [`${prefix}limit:{h1:acme}:rpm`, `${prefix}limit:{h1:acme}:slots`, `${prefix}limit:{h1:acme}:tpm`, `${prefix}limit:{h1:globex}:rpm`, `${prefix}limit:{h2:acme}:rpm`].sort(),
    );
    const tags = new Set(keys.filter((key) => key.includes("{h1:acme}")).map(hashTag));
    expect([...tags]).toEqual(["h1:acme"]);
    for (const key of keys) expect(await redis.client.pttl(key)).toBeGreaterThan(0);
    slot?.release();
    expect(first.fallbacks() + second.fallbacks()).toBe(0);
  });

  it("takes back a request refused for another limit, on the replica's shared count", async () => {
    const prefix = `limits-uncount-${process.pid}:`;
    const [first, second] = [await replica(prefix), await replica(prefix)];
    await first.counters.countRequest("{h:acme}", 2);
    const refusedElsewhere = await second.counters.countRequest("{h:acme}", 2);
    refusedElsewhere.uncount();
    refusedElsewhere.uncount();
    // Taken back in the background: once, whatever the machine's pace.
    await waitFor(async () => (await redis.client.get(`${prefix}limit:{h:acme}:rpm`)) === "1", "the request taken back");
    expect((await first.counters.countRequest("{h:acme}", 2)).counted).toBe(true);
    expect((await second.counters.countRequest("{h:acme}", 2)).counted).toBe(false);
  });

  it("holds at most the limit of slots across replicas; a released slot is free at once", async () => {
    const prefix = `limits-slots-${process.pid}:`;
    const [first, second] = [await replica(prefix), await replica(prefix)];
    const one = await first.counters.takeSlot("{h:acme}", 2);
    const two = await second.counters.takeSlot("{h:acme}", 2);
    expect(one).not.toBeNull();
    expect(two).not.toBeNull();
    expect(await first.counters.takeSlot("{h:acme}", 2)).toBeNull();
    expect(first.counters.slotsHeld + second.counters.slotsHeld).toBe(2);
    two?.release(); // removed from Redis in the background
    await waitFor(async () => (await redis.client.zcard(`${prefix}limit:{h:acme}:slots`)) === 1, "the released slot to leave Redis");
    const three = await first.counters.takeSlot("{h:acme}", 2);
    expect(three).not.toBeNull();
    one?.release();
    three?.release();
    expect(first.counters.slotsHeld).toBe(0);
  });

  it("keeps a held slot alive past its lifetime by renewing it, and frees the slot of a replica that died within it", async () => {
    const prefix = `limits-expiry-${process.pid}:`;
    const slots = `${prefix}limit:{h:acme}:slots`;
    // A lifetime of 1.5 s, renewed every 0.5 s: a busy machine's late renewal still comes in time.
    const living = await replica(prefix, { slotTtlMs: 1500 });
    const dying = await replica(prefix, { slotTtlMs: 1500 });
    const held = await living.counters.takeSlot("{h:acme}", 2);
    const taken = performance.now();
    const lost = await dying.counters.takeSlot("{h:acme}", 2);
    expect(held).not.toBeNull();
    expect(lost).not.toBeNull();
    // The dying replica stops renewing (its process is gone) without releasing anything.
    await dying.counters.close();
    dying.connection.disconnect();
    expect(await living.counters.takeSlot("{h:acme}", 2)).toBeNull();
    // Free once its lifetime is over (a default lifetime, 30 s, would be past this wait's deadline).
    const freed = await waitFor(() => living.counters.takeSlot("{h:acme}", 2), "the dead replica's slot to expire", { intervalMs: 50 });
    // Not before its lifetime was over (a lower bound: a busy machine only comes later).
    expect(performance.now() - taken).toBeGreaterThan(1450);
    // The living replica's own slot is renewed: its expiry moves on, and it is still held.
    const expiryOf = async (member: string) => Number(await redis.client.zscore(slots, member));
    const members = await redis.client.zrange(slots, "0", "-1");
    expect(members).toHaveLength(2);
    const expiries = await Promise.all(members.map(expiryOf));
    await waitFor(async () => (await Promise.all(members.map(expiryOf))).every((expiry, index) => expiry > (expiries[index] as number)), "both held slots to be renewed");
    expect(await living.counters.takeSlot("{h:acme}", 2)).toBeNull();
    held?.release();
    freed.release();
  });

  it("tells an error reply from no answer: a window key of the wrong type is counted in process as an `error`", async () => {
    const prefix = `limits-error-${process.pid}:`;
    const one = await replica(prefix);
    await redis.client.hset(`${prefix}limit:{h:wrongtype}:rpm`, "x", "1");
    expect((await one.counters.countRequest("{h:wrongtype}", 3)).counted).toBe(true);
    expect(one.reasons).toEqual(["error"]);
  });

  it("counts in process at once while Redis does not answer, says so once, and shares again when it is back", async () => {
    const port = await freePort();
    let own = await startRedis({ port });
    const prefix = `limits-outage-${process.pid}:`;
    // Commands wait up to a minute for a Redis that is connected: counting "at once" while it is away
    // is then whatever ends within the test's time, however busy the machine.
    const first = await replica(prefix, { url: own.url, commandTimeoutMs: 60_000 });
    const second = await replica(prefix, { url: own.url, commandTimeoutMs: 60_000 });
    try {
      expect((await first.counters.countRequest("{h:acme}", 3)).used).toBe(1);
      const sharedSlot = await first.counters.takeSlot("{h:acme}", 1);
      await own.stop();
      await waitFor(() => [first, second].every(({ connection }) => connection.status !== "ready"), "both connections to notice");

      const alone = [];
      for (let index = 0; index < 4; index += 1) alone.push(await first.counters.countRequest("{h:acme}", 3));
      // Each replica counts on its own: the first's count starts afresh, the second's too.
      expect(alone.map((count) => count.counted)).toEqual([true, true, true, false]);
      expect((await second.counters.countRequest("{h:acme}", 3)).used).toBe(1);
      const localSlot = await first.counters.takeSlot("{h:acme}", 1);
      expect(localSlot).not.toBeNull();
      expect(await first.counters.takeSlot("{h:acme}", 1)).toBeNull();
      localSlot?.release();
      sharedSlot?.release();
      expect(first.counters.slotsHeld).toBe(0);
      expect(first.fallbacks()).toBe(6);
      // Redis gone, the connection lost: no answer (no gate here to know the node down beforehand).
      expect(new Set(first.reasons)).toEqual(new Set(["no_answer"]));
      expect(first.lines.filter((line) => /Redis does not answer/.test(line))).toHaveLength(1);

      own = await startRedis({ port });
      await waitFor(() => [first, second].every(({ connection }) => connection.status === "ready"), "both connections back", { intervalMs: 50 });
      const counts = [await first.counters.countRequest("{h:back}", 5), await second.counters.countRequest("{h:back}", 5)];
      expect(counts.map((count) => count.used)).toEqual([1, 2]);
      expect(first.lines.filter((line) => /Redis answers again/.test(line))).toHaveLength(1);
    } finally {
      await own.stop();
    }
  }, 20_000);
});
