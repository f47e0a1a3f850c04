import pino from "pino";
import { afterAll, beforeAll, describe } from "vitest";
import { type RedisKeys, redisKeys } from "../../src/redis/keys.js";
import { openRedis } from "../../src/redis/redis-connection.js";
import { RedisGate } from "../../src/redis/redis-gate.js";
import { systemClock } from "../../src/util/clock.js";
import { describeWith, REDIS } from "./external-programs.js";
import { type RedisServer, startRedis } from "./redis-server.js";

/** Where a store under a contract test keeps its records, and how the test moves time on for it. */
export interface StoreBackend {
  name: "memory" | "redis";
  /** The clock an in-process store reads (milliseconds); Redis keeps its own. */
  now: () => number;
  /** Lets `seconds` pass for every record's expiry. */
  elapse(seconds: number): Promise<void>;
  /** The Redis gate, key names and a raw client (Redis only), for a store over Redis and for writing what a store must not trust. */
  redis?: { gate: RedisGate; keys: RedisKeys; server: RedisServer };
}

/** The Redis of a backend that has one: for the cases only a shared store has (records written by another hand). */
export function redisOf(backend: StoreBackend): NonNullable<StoreBackend["redis"]> {
  if (!backend.redis) throw new Error(`the ${backend.name} backend has no Redis`);
  return backend.redis;
}

/** A logger that keeps nothing (a store's warnings about records it cannot read). */
export const silentLogger = pino({ level: "silent" });

/**
 * Runs one store contract (docs/development.md#where-a-test-lives) against both of a store's
 * implementations: in memory, with a clock the test moves, and over a real redis-server (skipped,
 * saying so, without one; a failure with REQUIRE_EXTERNAL_PROGRAMS=1), through the same `RedisGate`
 * the adapter uses, each suite under a key prefix of its own.
 */
export function describeOnBothBackends(title: string, contract: (backend: () => StoreBackend, name: StoreBackend["name"]) => void): void {
  describe(`${title} (in memory)`, () => {
    let now = 1_000_000;
    const backend: StoreBackend = {
      name: "memory",
      now: () => now,
      elapse: async (seconds) => {
        now += seconds * 1000;
      },
    };
    contract(() => backend, "memory");
  });
  describeWith(REDIS, `${title} (in Redis)`, () => {
    let server: RedisServer;
    let backend: StoreBackend;
    beforeAll(async () => {
      server = await startRedis();
      const prefix = `contract-${title.replace(/\W+/g, "-")}-${process.pid}:`;
      const gate = new RedisGate(openRedis({ kind: "single", url: server.url }, { commandTimeoutMs: 5000 }), {
        failuresToDown: 2,
        probeIntervalMs: 500,
        firstConnectMs: 5000,
        deadlineMs: 5000,
        clock: systemClock,
      });
      backend = {
        name: "redis",
        now: () => Date.now(),
        elapse: (seconds) => ageKeys(server, `${prefix}*`, seconds * 1000),
        redis: { gate, keys: redisKeys(prefix), server },
      };
    });
    afterAll(async () => {
      backend?.redis?.gate.close();
      await server?.stop();
    });
    contract(() => backend, "redis");
  });
}

/**
 * Lets `ms` pass for the expiry of every key matching `pattern`: each key with a time to live gets
 * that much less (and is gone when nothing is left), as if Redis's clock had moved on.
 */
async function ageKeys(server: RedisServer, pattern: string, ms: number): Promise<void> {
  const keys = await server.client.keys(pattern);
  for (const key of keys) {
    const left = await server.client.pttl(key);
    if (left < 0) continue;
    if (left <= ms) await server.client.del(key);
    else await server.client.pexpire(key, left - ms);
  }
}
