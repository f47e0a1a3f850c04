import { Redis } from "ioredis";

/** Bound on one Redis command: a request never waits on a slow Redis longer than this. */
export const REDIS_COMMAND_TIMEOUT_MS = 50;

/**
 * A Redis connection that fails fast (docs/architecture.md#conversations): no offline queue (a
 * command while disconnected fails at once instead of waiting for a reconnect), no retries of a
 * command, a short command timeout. Everything the adapter keeps in Redis is a cache of something
 * it can do without, so a failure means "not found" or "not stored", never a slower answer.
 * `rediss://` URLs connect with TLS.
 */
export function openRedis(url: string): Redis {
  const redis = new Redis(url, {
    lazyConnect: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: 2000,
    // Reconnect soon after an outage, then every second at most.
    retryStrategy: (attempt) => Math.min(1000, 50 * attempt),
  });
  // Connection errors surface on the commands that need the connection; logging them here as well
  // would repeat them for every reconnect attempt.
  redis.on("error", () => undefined);
  return redis;
}
