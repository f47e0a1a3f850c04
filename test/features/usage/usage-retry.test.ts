import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { namedAccount } from "../../../src/auth/account.js";
import { redisKeys } from "../../../src/redis/keys.js";
import { openRedis } from "../../../src/redis/redis-connection.js";
import { RedisGate } from "../../../src/redis/redis-gate.js";
import { RedisUsageStore } from "../../../src/usage/redis-usage-store.js";
import { UsageLedger } from "../../../src/usage/usage-ledger.js";
import type { RetryOutcome } from "../../../src/util/retry-briefly.js";
import { systemClock } from "../../../src/util/clock.js";
import { describeWith, REDIS_SERVERS } from "../../helpers/external-programs.js";
import { type RedisServer, startRedis } from "../../helpers/redis-server.js";
import { silentLogger } from "../../helpers/store-backends.js";

// docs/governance.md#usage: a usage write that Redis runs after the gate gave up on it (the gate's
// deadline rejects while the command may still finish) is retried by the ledger; the retry and the
// late first write together count the answer once.
describeWith(REDIS_SERVERS, "a usage charge retried after a Redis timeout", () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis({ own: true });
  });
  afterAll(() => redis?.stop());

  it("is counted once, though every attempt reached Redis", async () => {
    const prefix = `usage-retry-${process.pid}:`;
    const gate = new RedisGate(openRedis({ kind: "single", url: redis.url }, { commandTimeoutMs: 5000 }), {
      failuresToDown: 5,
      probeIntervalMs: 100,
      firstConnectMs: 5000,
      // The bound of one command: far shorter than Redis's pause below, so the first attempts time out.
      deadlineMs: 100,
      clock: systemClock,
    });
    const outcomes: RetryOutcome[] = [];
    const ledger = new UsageLedger({
      store: new RedisUsageStore(gate, redisKeys(prefix), 2, () => Date.now(), silentLogger),
      clock: systemClock,
      newId: () => randomUUID(),
      logger: silentLogger,
      events: { onWritten: (outcome) => outcomes.push(outcome) },
    });
    const pauser = redis.client.duplicate();
    try {
      if (gate.redis.status !== "ready") await new Promise((resolve) => gate.redis.once("ready", resolve));
      const day = new Date().toISOString().slice(0, 10);
      // Every write command (scripts included) waits, unanswered, until the pause ends; then it runs.
      expect(await pauser.call("CLIENT", "PAUSE", "700", "WRITE")).toBe("OK");
      ledger.charge(namedAccount("team-search"), "acme", "ask", { promptTokens: 9, completionTokens: 40, reasoningTokens: 4 });
      await ledger.close();
      expect(outcomes).toEqual(["retried"]);
      const totals = await ledger.totals([day]);
      expect(totals).toEqual([{ day, account: "team-search", workspace: "acme", mode: "ask", inputTokens: 9, outputTokens: 40, reasoningTokens: 4, answers: 1 }]);
    } finally {
      pauser.disconnect();
      gate.close();
    }
  });
});
