import { type ChainableCommander, Redis } from "ioredis";

/** How a connection bounds its commands. */
export interface RedisConnectionOptions {
  /**
   * Bound on one command while connected (`REDIS_COMMAND_TIMEOUT_MS`): long enough for a slow Redis
   * (a busy machine, a fork, a failover) to answer, since a lookup that gives up too soon cannot
   * tell a conversation apart from a new one (docs/architecture.md#redis-down-or-slow).
   */
  commandTimeoutMs: number;
}

/**
 * A Redis connection that never queues (docs/architecture.md#redis-down-or-slow): no offline queue
 * (a command while disconnected fails at once instead of waiting for a reconnect), no retries of a
 * command, a bounded command time. Whether a failure means "slow" or "down" is the `RedisGate`'s
 * call. `rediss://` URLs connect with TLS.
 */
export function openRedis(url: string, options: RedisConnectionOptions): Redis {
  const redis = new Redis(url, {
    lazyConnect: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: options.commandTimeoutMs,
    connectTimeout: 2000,
    // Reconnect soon after an outage, then every second at most.
    retryStrategy: (attempt) => Math.min(1000, 50 * attempt),
  });
  // Connection errors surface on the commands that need the connection; logging them here as well
  // would repeat them for every reconnect attempt.
  redis.on("error", () => undefined);
  return redis;
}

/** Runs a MULTI batch; the first command that failed inside it rejects, as a single command would. */
export async function execOrThrow(batch: ChainableCommander): Promise<[error: Error | null, result: unknown][]> {
  const results = (await batch.exec()) ?? [];
  const failed = results.find(([error]) => error);
  if (failed) throw failed[0];
  return results;
}
