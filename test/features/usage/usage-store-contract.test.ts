import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import { MemoryUsageStore } from "../../../src/usage/memory-usage-store.js";
import { RedisUsageStore } from "../../../src/usage/redis-usage-store.js";
import type { UsageCharge, UsageStore } from "../../../src/usage/usage-store.js";
import { describeOnBothBackends, redisOf, silentLogger, type StoreBackend } from "../../helpers/store-backends.js";

// docs/governance.md#usage: one contract, in memory and on a real redis-server.
const charge = (day: string, account: string, workspace: string, mode: string, input: number, output: number, reasoning = 0): UsageCharge => ({
  id: randomUUID(),
  day, account, workspace, mode, inputTokens: input, outputTokens: output, reasoningTokens: reasoning,
});

function storeOf(backend: StoreBackend, retentionDays = 400): UsageStore {
  if (backend.name === "memory") return new MemoryUsageStore(retentionDays);
  const { gate, keys } = redisOf(backend);
  return new RedisUsageStore(gate, keys, retentionDays, () => Date.now(), silentLogger);
}

describeOnBothBackends("the usage store", (backend, name) => {
  const today = new Date().toISOString().slice(0, 10);

  if (name === "redis") it("leaves out of the totals what Redis gives back that does not parse: a field not of its shape, a count that is not one", async () => {
    const store = storeOf(backend());
    const { keys, server } = redisOf(backend());
    const day = "2021-03-04";
    await store.add(charge(day, "team-search", "acme", "ask", 5, 6));
    const key = keys.usageDay(day);
    await server.client.hset(key, "team-search\tacme\task\tout", "6e3", "someone\tacme\task\tin", "-4", "junk", "7");
    await server.client.hset(key, "a\tb\tc\td\tin", "1", "x\t\task\tin", "2", "y\tacme\task\tanswers", "12345678901234567890");
    expect(await store.totals([day])).toEqual([
      { day, account: "team-search", workspace: "acme", mode: "ask", inputTokens: 5, outputTokens: 0, reasoningTokens: 0, answers: 1 },
    ]);
  });

  it("adds each answer to its day's total for its account, workspace and mode", async () => {
    const store = storeOf(backend());
    await store.add(charge(today, "team-search", "acme", "ask", 10, 20, 5));
    await store.add(charge(today, "team-search", "acme", "ask", 1, 2));
    await store.add(charge(today, "litellm/alice smith", "acme:eu.1", "reason", 3, 4));
    await store.add(charge("2020-01-02", "team-search", "acme", "ask", 100, 100));
    const totals = await store.totals([today]);
    expect(totals.sort((a, b) => a.account.localeCompare(b.account))).toEqual([
      { day: today, account: "litellm/alice smith", workspace: "acme:eu.1", mode: "reason", inputTokens: 3, outputTokens: 4, reasoningTokens: 0, answers: 1 },
      { day: today, account: "team-search", workspace: "acme", mode: "ask", inputTokens: 11, outputTokens: 22, reasoningTokens: 5, answers: 2 },
    ]);
    expect(await store.totals(["2020-01-02", "2020-01-03"])).toEqual([
      { day: "2020-01-02", account: "team-search", workspace: "acme", mode: "ask", inputTokens: 100, outputTokens: 100, reasoningTokens: 0, answers: 1 },
    ]);
  });

  it("applies a charge once, however often its write is sent again (a retry after a timeout)", async () => {
    const store = storeOf(backend());
    const once = charge(today, "retried", "acme", "ask", 7, 11, 3);
    await Promise.all([store.add(once), store.add(once)]);
    await store.add(once);
    await store.add({ ...once, id: randomUUID() });
    const [total] = (await store.totals([today])).filter((entry) => entry.account === "retried");
    expect(total).toMatchObject({ inputTokens: 14, outputTokens: 22, reasoningTokens: 6, answers: 2 });
  });

  it("adds what several writers add at once, none lost", async () => {
    const store = storeOf(backend());
    await Promise.all(Array.from({ length: 50 }, (_, index) => store.add(charge(today, "concurrent", "acme", "ask", index, 1))));
    const [total] = (await store.totals([today])).filter((entry) => entry.account === "concurrent");
    expect(total).toMatchObject({ inputTokens: 1225, outputTokens: 50, answers: 50 });
  });

  it("keeps a day as long as the retention says, then forgets it", async () => {
    const store = storeOf(backend(), 2);
    const old = new Date(Date.now() - 5 * 86_400_000).toISOString().slice(0, 10);
    await store.add(charge(old, "kept", "acme", "ask", 1, 1));
    await store.add(charge(today, "kept", "acme", "ask", 1, 1));
    await backend().elapse(60);
    expect((await store.totals([today])).filter((entry) => entry.account === "kept")).toHaveLength(1);
    await backend().elapse(2 * 86_400);
    expect(await store.totals([old])).toEqual([]);
  });
});
