import { z } from "zod";
import { redisTopologyOf, redisTopologyVariables } from "./redis-topology.js";
import { documented, integer, issue } from "./variables.js";

/** The redis section's variables: which Redis the replicas share, and how the adapter uses it. */
export const redisVariables = redisTopologyVariables.extend({
  REDIS_KEY_PREFIX: documented(z.string().min(1).default("workspace-openai-adapter:"), "Prefix of every key the adapter writes in Redis"),
  REDIS_COMMAND_TIMEOUT_MS: documented(
    integer(1000, 10, 60_000),
    "How long a Redis command may take while Redis is connected before it counts as failed (a slow Redis is waited for; one that is disconnected or failing in a row is skipped at once)",
  ),
  CLUSTER_POLLING: documented(
    z.enum(["auto", "off"]).default("auto"),
    "With Redis, `auto` shares each workspace's polling between replicas (one lease holder lists for all); `off` polls per replica",
  ),
  CLUSTER_LEASE_MS: documented(integer(3000, 200), "How long a replica's polling lease lasts unrenewed: a dead holder is replaced within about this long"),
});

/** The redis section's variables as validated. */
export type RedisSectionVariables = z.output<typeof redisVariables>;

/**
 * The redis section as the adapter reads it: undefined when no Redis is named (everything stays in
 * process). `pollIntervalMaxMs` (the upstream section's) sets the polling lease's floor.
 */
export function redisSettings(env: RedisSectionVariables, context: z.RefinementCtx, pollIntervalMaxMs: number) {
  if (/[{}]/.test(env.REDIS_KEY_PREFIX)) {
    issue(context, "REDIS_KEY_PREFIX", "must not contain { or } (the adapter's keys carry their own Redis Cluster hash tags)");
  }
  const topology = redisTopologyOf(env, context);
  if (!topology) return undefined;
  return {
    topology,
    /** Prefix of every key (src/redis/keys.ts). */
    keyPrefix: env.REDIS_KEY_PREFIX,
    commandTimeoutMs: env.REDIS_COMMAND_TIMEOUT_MS,
    /** Shared polling between replicas: not turned off. */
    clusterPolling: env.CLUSTER_POLLING === "auto",
    /** At least one and a half of the longest poll interval, so the holder renews it in time. */
    clusterLeaseMs: Math.max(env.CLUSTER_LEASE_MS, Math.ceil(1.5 * pollIntervalMaxMs)),
  };
}

/** The Redis the replicas share (one node, a cluster or Sentinel) and how the adapter uses it (`REDIS_*`, `CLUSTER_*`). */
export type RedisSettings = NonNullable<ReturnType<typeof redisSettings>>;
