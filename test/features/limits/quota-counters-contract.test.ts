import { randomUUID } from "node:crypto";
import { afterAll, expect, it } from "vitest";
import type { LimitCounters } from "../../../src/limits/limit-counters.js";
import { MemoryLimitCounters } from "../../../src/limits/limit-counters.js";
import type { QuotaLimit } from "../../../src/limits/quota-counts.js";
import { type QuotaPeriod, quotaPeriod } from "../../../src/limits/quota-periods.js";
import { RedisLimitCounters } from "../../../src/limits/redis-limit-counters.js";
import { RedisQuotaCounts } from "../../../src/limits/redis-quota-counts.js";
import { groupTag } from "../../../src/redis/keys.js";
import { openRedis } from "../../../src/redis/redis-connection.js";
import { describeOnBothBackends, redisOf, silentLogger, type StoreBackend } from "../../helpers/store-backends.js";
import { waitFor } from "../../helpers/wait-for.js";

// docs/rate-limits.md#quotas and #reservations: the token quotas' counts and reservations, one
// contract, in memory and on a real redis-server (the counters each backend builds: memoryBackend, redisBackend).
describeOnBothBackends("the token quotas' counters", (backend, name) => {
  const opened: { counters: LimitCounters; disconnect?: () => void }[] = [];

  /** Counters as one replica has them: in memory on the backend's clock, or on a Redis connection of their own. */
  async function countersOn(of: StoreBackend): Promise<LimitCounters> {
    if (of.name === "memory") {
      const counters = new MemoryLimitCounters(60, of.now);
      opened.push({ counters });
      return counters;
    }
    const { keys, server } = redisOf(of);
    const connection = openRedis({ kind: "single", url: server.url }, { commandTimeoutMs: 5000 });
    // Ready first: a command before it would be counted in process (the counters' fallback), not in Redis.
    if (connection.status !== "ready") await new Promise((resolve) => connection.once("ready", resolve));
    const counters = new RedisLimitCounters({ redis: connection, keys, windowSeconds: 60, slotTtlMs: 30_000, logger: silentLogger, now: of.now });
    opened.push({ counters, disconnect: () => connection.disconnect() });
    return counters;
  }

  afterAll(async () => {
    for (const { counters, disconnect } of opened) {
      await counters.close();
      disconnect?.();
    }
  });

  /** A day and a month quota of `tpd` and `tpmo` tokens, in the periods `now` falls in. */
  const quotasAt = (now: number, tpd: number, tpmo: number): QuotaLimit[] => [
    { period: quotaPeriod("tpd", now), limit: tpd },
    { period: quotaPeriod("tpmo", now), limit: tpmo },
  ];
  const periodsOf = (quotas: readonly QuotaLimit[]) => quotas.map((quota) => quota.period);

  it("reads back what was settled to a key in each period, every key and period apart", async () => {
    const counters = await countersOn(backend());
    const quotas = quotasAt(backend().now(), 1000, 1000);
    const periods = periodsOf(quotas);
    const [key, other] = [groupTag("reader", "acme"), groupTag("reader", "globex")];
    expect(await counters.quotaUsed(key, periods)).toEqual([0, 0]);
    (await counters.reserveQuota(key, randomUUID(), quotas, 200)).settle(120, periods);
    (await counters.reserveQuota(key, randomUUID(), [quotas[1] as QuotaLimit], 30)).settle(30, [periods[1] as QuotaPeriod]);
    (await counters.reserveQuota(other, randomUUID(), quotas, 7)).settle(7, periods);
    await waitFor(async () => (await counters.quotaUsed(key, periods))[1] === 150, "the settlements to be counted");
    expect(await counters.quotaUsed(key, periods)).toEqual([120, 150]);
    expect(await counters.quotaUsed(other, periods)).toEqual([7, 7]);
  });

  it("reserves only what fits under every quota, all of it or nothing, and holds it until settled", async () => {
    const counters = await countersOn(backend());
    const quotas = quotasAt(backend().now(), 1000, 700);
    const periods = periodsOf(quotas);
    const key = groupTag("fits", "acme");
    const first = await counters.reserveQuota(key, randomUUID(), quotas, 600);
    expect(first).toMatchObject({ reserved: true, used: [0, 0] });
    expect(await counters.quotaUsed(key, periods)).toEqual([600, 600]);
    // The day has room for 400 more, the month for 100: nothing is taken from either.
    const over = await counters.reserveQuota(key, randomUUID(), quotas, 300);
    expect(over).toMatchObject({ reserved: false, used: [600, 600] });
    expect(await counters.quotaUsed(key, periods)).toEqual([600, 600]);
    expect(await counters.reserveQuota(key, randomUUID(), quotas, 100)).toMatchObject({ reserved: true });
    // A quota reached refuses even a reservation of nothing.
    expect(await counters.reserveQuota(key, randomUUID(), quotas, 0)).toMatchObject({ reserved: false, used: [700, 700] });
    over.settle(300, periods);
    first.settle(50, periods);
    await waitFor(async () => (await counters.quotaUsed(key, periods))[0] === 150, "the first answer settled to its tokens");
    expect(await counters.quotaUsed(key, periods)).toEqual([150, 150]);
  });

  it("settles a reservation once, however often asked: what it held given back, the answer's tokens charged to the periods it ends in", async () => {
    const counters = await countersOn(backend());
    const now = backend().now();
    const today = quotasAt(now, 1000, 10_000);
    const key = groupTag("once", "acme");
    const held = await counters.reserveQuota(key, randomUUID(), today, 400);
    const tomorrow = [quotaPeriod("tpd", today[0]?.period.endsAt as number), today[1]?.period as QuotaPeriod];
    held.settle(90, tomorrow);
    held.settle(90, tomorrow);
    await waitFor(async () => (await counters.quotaUsed(key, tomorrow))[0] === 90, "the answer's tokens in the next day's count");
    expect(await counters.quotaUsed(key, periodsOf(today))).toEqual([0, 90]);
    expect(await counters.quotaUsed(key, tomorrow)).toEqual([90, 90]);
  });

  it("starts each period afresh: the next day's count is its own, the month's goes on", async () => {
    const counters = await countersOn(backend());
    const today = quotasAt(backend().now(), 1000, 1000);
    const key = groupTag("next-day", "acme");
    (await counters.reserveQuota(key, randomUUID(), today, 50)).settle(50, periodsOf(today));
    await waitFor(async () => (await counters.quotaUsed(key, periodsOf(today)))[0] === 50, "today's charge");
    const tomorrow = quotaPeriod("tpd", today[0]?.period.endsAt as number);
    expect(await counters.quotaUsed(key, [tomorrow])).toEqual([0]);
  });

  if (name === "redis") it("shares one key's counts between replicas: concurrent reservations on two replicas never pass a quota together", async () => {
    const [first, second] = [await countersOn(backend()), await countersOn(backend())];
    const quotas = [{ period: quotaPeriod("tpd", backend().now()), limit: 3000 }];
    const key = groupTag("shared", "acme");
    const reservations = await Promise.all(Array.from({ length: 12 }, (_, index) => (index % 2 ? second : first).reserveQuota(key, randomUUID(), quotas, 1000)));
    expect(reservations.filter((reservation) => reservation.reserved)).toHaveLength(3);
    expect(await second.quotaUsed(key, periodsOf(quotas))).toEqual([3000]);
    for (const reservation of reservations) reservation.settle(900, periodsOf(quotas));
    await waitFor(async () => (await first.quotaUsed(key, periodsOf(quotas)))[0] === 2700, "each replica's settlements in one count");
  });

  if (name === "redis") it("takes a reservation once and settles it once when its command is sent again (a retry after a timeout), and a replica that takes an answer over settles what another held", async () => {
    const { keys, server } = redisOf(backend());
    const quotas = [{ period: quotaPeriod("tpd", backend().now()), limit: 5000 }];
    const periods = periodsOf(quotas);
    const key = groupTag("resent", "acme");
    const direct = new RedisQuotaCounts(server.client, keys, silentLogger, backend().now);
    const id = randomUUID();
    expect(await direct.reserve(key, id, quotas, 1000)).toMatchObject({ reserved: true, used: [0] });
    expect(await direct.reserve(key, id, quotas, 1000)).toMatchObject({ reserved: true });
    expect(await direct.used(key, periods)).toEqual([1000]);
    await direct.settle(key, id, periods, 300, periods);
    await direct.settle(key, id, periods, 300, periods);
    expect(await direct.used(key, periods)).toEqual([300]);
    // Held by a replica that died: another settles it (its record says what is held), and the first's late settlement changes nothing.
    const counters = await countersOn(backend());
    const dead = randomUUID();
    expect(await direct.reserve(key, dead, quotas, 2000)).toMatchObject({ reserved: true });
    counters.settleQuota(key, { id: dead, periods, tokens: 2000 }, 1500, periods);
    await waitFor(async () => (await direct.used(key, periods))[0] === 1800, "the held reservation settled by another replica");
    await direct.settle(key, dead, periods, 1500, periods);
    expect(await direct.used(key, periods)).toEqual([1800]);
  });

  if (name === "redis") it("counts a stored count that does not parse as nothing, never trusting it", async () => {
    const counters = await countersOn(backend());
    const { keys, server } = redisOf(backend());
    const quotas = quotasAt(backend().now(), 100, 100);
    const key = groupTag("corrupt", "acme");
    await server.client.set(keys.limitQuota(key, quotas[0]?.period.id as string), "9e99");
    await server.client.set(keys.limitQuota(key, quotas[1]?.period.id as string), "12");
    expect(await counters.quotaUsed(key, periodsOf(quotas))).toEqual([0, 12]);
    expect(await counters.reserveQuota(key, randomUUID(), quotas, 80)).toMatchObject({ reserved: true, used: [0, 12] });
    expect(await counters.quotaUsed(key, periodsOf(quotas))).toEqual([80, 92]);
  });
});
