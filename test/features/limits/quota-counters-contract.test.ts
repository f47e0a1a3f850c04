import { afterAll, expect, it } from "vitest";
import type { LimitCounters } from "../../../src/limits/limit-counters.js";
import { MemoryLimitCounters } from "../../../src/limits/limit-counters.js";
import { quotaPeriod } from "../../../src/limits/quota-periods.js";
import { RedisLimitCounters } from "../../../src/limits/redis-limit-counters.js";
import { groupTag } from "../../../src/redis/keys.js";
import { openRedis } from "../../../src/redis/redis-connection.js";
import { describeOnBothBackends, redisOf, silentLogger, type StoreBackend } from "../../helpers/store-backends.js";
import { waitFor } from "../../helpers/wait-for.js";

// docs/rate-limits.md#quotas: the token quotas' counts, one contract, in memory and on a real
// redis-server (the counters each backend builds: memoryBackend, redisBackend).
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

  it("reads back what was charged to a key in each period, every key and period apart", async () => {
    const counters = await countersOn(backend());
    const now = backend().now();
    const periods = [quotaPeriod("tpd", now), quotaPeriod("tpmo", now)];
    const [key, other] = [groupTag("reader", "acme"), groupTag("reader", "globex")];
    expect(await counters.quotaUsed(key, periods)).toEqual([0, 0]);
    counters.chargeQuota(key, periods, 120);
    counters.chargeQuota(key, [periods[1] as never], 30);
    counters.chargeQuota(other, periods, 7);
    await waitFor(async () => (await counters.quotaUsed(key, periods))[1] === 150, "the charges to be counted");
    expect(await counters.quotaUsed(key, periods)).toEqual([120, 150]);
    expect(await counters.quotaUsed(other, periods)).toEqual([7, 7]);
  });

  it("starts each period afresh: the next day's count is its own, the month's goes on", async () => {
    const counters = await countersOn(backend());
    const now = backend().now();
    const key = groupTag("next-day", "acme");
    const today = [quotaPeriod("tpd", now), quotaPeriod("tpmo", now)];
    counters.chargeQuota(key, today, 50);
    await waitFor(async () => (await counters.quotaUsed(key, today))[0] === 50, "today's charge");
    const tomorrow = quotaPeriod("tpd", today[0]?.endsAt as number);
    expect(await counters.quotaUsed(key, [tomorrow])).toEqual([0]);
  });

  if (name === "redis") it("shares one key's counts between replicas: what one charged, the other reads", async () => {
    const [first, second] = [await countersOn(backend()), await countersOn(backend())];
    const periods = [quotaPeriod("tpd", backend().now())];
    const key = groupTag("shared", "acme");
    first.chargeQuota(key, periods, 40);
    second.chargeQuota(key, periods, 2);
    await waitFor(async () => (await second.quotaUsed(key, periods))[0] === 42, "both replicas' charges in one count");
    expect(await first.quotaUsed(key, periods)).toEqual([42]);
  });

  if (name === "redis") it("counts a stored count that does not parse as nothing, never trusting it", async () => {
    const counters = await countersOn(backend());
    const { keys, server } = redisOf(backend());
    const periods = [quotaPeriod("tpd", backend().now()), quotaPeriod("tpmo", backend().now())];
    const key = groupTag("corrupt", "acme");
    await server.client.set(keys.limitQuota(key, periods[0]?.id as string), "9e99");
    await server.client.set(keys.limitQuota(key, periods[1]?.id as string), "12");
    expect(await counters.quotaUsed(key, periods)).toEqual([0, 12]);
  });
});
