import type { RedisSettings } from "../config/config.js";
import { describeTopology } from "../config/redis-topology.js";
import { RedisBackgroundStore } from "../continuity/background/redis-background-store.js";
import { RedisConversationsApiStore } from "../continuity/conversations-api/redis-conversations-api-store.js";
import { RedisResponseStore } from "../continuity/responses/redis-response-store.js";
import { storedValueSchema } from "../dialects/responses/stored-value.js";
import { fallbackResponseStore, MemoryResponseStore } from "../continuity/responses/response-store.js";
import { fallbackQueryOwnerStore, MemoryQueryOwnerStore } from "../continuity/ownership/query-owner-store.js";
import { RedisQueryOwnerStore } from "../continuity/ownership/redis-query-owner-store.js";
import { RedisThreadStore } from "../continuity/threads/redis-thread-store.js";
import { fallbackThreadStore, MemoryThreadStore } from "../continuity/threads/thread-store.js";
import type { LimitCounters } from "../limits/limit-counters.js";
import { RedisLimitCounters } from "../limits/redis-limit-counters.js";
import { RedisOAuthStorage } from "../oauth/redis-oauth-storage.js";
import { redisKeys } from "../redis/keys.js";
import { openRedis, openSubscriber } from "../redis/redis-connection.js";
import { RedisGate } from "../redis/redis-gate.js";
import { RedisPollSharing } from "../redis/redis-poll-sharing.js";
import { RedisUsageStore } from "../usage/redis-usage-store.js";
import { type Backend, type BackendSettings, CONVERSATION_MAX_ITEMS } from "./backend.js";

/** Bound on a rate-limit command: past it, an admission counts in process rather than wait. */
const LIMITS_COMMAND_TIMEOUT_MS = 250;

/**
 * Everything in the Redis the replicas share (docs/architecture/redis.md#redis-topologies): one command
 * connection behind one gate for every store (docs/architecture/redis.md#redis-down-or-slow), the poll
 * sharing with its subscriber, and the limits' counters on a connection of their own whose commands
 * are bounded short. Thread memory, stored responses and query owners keep this replica's own
 * memory behind them, for what it wrote while Redis is away; a write that ends an answer is waited
 * for up to `STORE_WRITE_WAIT_MS`.
 */
export function redisBackend(redis: RedisSettings, settings: BackendSettings): Backend {
  const { config, clock, logger, metrics, windowSeconds } = settings;
  const { topology } = redis;
  const now = () => clock.now();
  const keys = redisKeys(redis.keyPrefix);
  const connection = { commandTimeoutMs: redis.commandTimeoutMs };
  const gate = new RedisGate(openRedis(topology, connection), {
    failuresToDown: 2,
    probeIntervalMs: 500,
    firstConnectMs: 2000,
    deadlineMs: redis.commandTimeoutMs,
    clock,
    events: {
      onCommand: (seconds, outcome) => metrics.redisCommandSeconds.observe({ outcome }, seconds),
      onAvailability: (available) => {
        metrics.redisAvailabilityChanges.inc({ state: available ? "up" : "down" });
        if (available) logger.info("Redis answers again");
        else logger.warn("Redis is unreachable: its commands are skipped until it answers (new questions are answered; continuations it alone knows are refused)");
      },
    },
  });
  logger.info({ redis: describeTopology(topology) }, "sharing state between replicas through Redis");
  // docs/upstream-assumptions.md#polling: one replica lists each workspace for all.
  const sharing = redis.clusterPolling
    ? new RedisPollSharing({
      redis: gate,
      subscriber: openSubscriber(topology, connection, gate.redis),
      keys,
      leaseMs: redis.clusterLeaseMs,
      logger,
      clock,
      events: {
        onLease: (change) => metrics.leaseChanges.inc({ change }),
        onPublished: (items) => metrics.snapshotsPublished.inc(items),
        onReceived: (items) => metrics.snapshotsReceived.inc(items),
        onFallback: (reason) => metrics.clusterFallbacks.inc({ reason }),
      },
    })
    : undefined;
  // docs/rate-limits.md: an admission never waits long on a slow Redis (it counts in process for
  // that moment), and skips Redis at once while the gate knows it is down. OAuth attempts (docs/mcp-oauth.md)
  // count on the same connection (opened when first needed), under their own names.
  const countersConnection = { commandTimeoutMs: Math.min(LIMITS_COMMAND_TIMEOUT_MS, redis.commandTimeoutMs) };
  let countersRedis: ReturnType<typeof openRedis> | undefined;
  const counters = (seconds: number, options: { slotTtlMs: number; windowKey?: (key: string) => string }): LimitCounters =>
    new RedisLimitCounters({
      redis: (countersRedis ??= openRedis(topology, countersConnection)),
      available: (tag) => gate.availableFor(tag),
      keys,
      windowSeconds: seconds,
      logger,
      onFallback: (reason) => metrics.rateLimitFallbacks.inc({ reason }),
      now,
      ...options,
    });
  const limitCounters = config.limits.rate ? counters(windowSeconds, { slotTtlMs: config.limits.rate.slotTtlMs }) : undefined;
  return {
    stores: {
      threads: fallbackThreadStore(
        new RedisThreadStore(gate, keys),
        new MemoryThreadStore(config.continuity.conversationMaxEntries, now),
      ),
      responses: fallbackResponseStore(
        new RedisResponseStore(gate, keys, logger, storedValueSchema),
        new MemoryResponseStore(config.continuity.responsesMaxEntries, now),
      ),
      background: new RedisBackgroundStore(gate, keys, logger),
      conversations: new RedisConversationsApiStore(gate, keys, CONVERSATION_MAX_ITEMS, logger),
      owners: fallbackQueryOwnerStore(
        new RedisQueryOwnerStore(gate, keys, logger),
        new MemoryQueryOwnerStore(config.continuity.conversationMaxEntries, now),
      ),
    },
    writes: { waitMs: config.continuity.storeWriteWaitMs, answersAgain: () => gate.nextAvailable() },
    limitCounters,
    attemptCounters: (seconds) => counters(seconds, { slotTtlMs: LIMITS_COMMAND_TIMEOUT_MS, windowKey: keys.oauthAttempts }),
    usageStore: (retentionDays) => new RedisUsageStore(gate, keys, retentionDays, now, logger),
    oauthStorage: () => new RedisOAuthStorage(gate, keys),
    pollSharing: sharing,
    sharedStoreAvailable: () => gate.available,
    leasesHeld: () => sharing?.leasesHeld ?? 0,
    close: async () => {
      await sharing?.close();
      await limitCounters?.close();
      countersRedis?.disconnect();
      gate.close();
    },
  };
}
