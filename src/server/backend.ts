import type { Logger } from "pino";
import type { Config } from "../config/config.js";
import type { StoredValue } from "../dialects/responses/stored-value.js";
import type { ContinuityStores, StoreWrites } from "../continuity/continuity.js";
import type { LimitCounters } from "../limits/limit-counters.js";
import type { Metrics } from "../metrics/metrics.js";
import type { OAuthStorage } from "../oauth/oauth-storage.js";
import type { PollSharing } from "../upstream/poll-sharing.js";
import type { UsageStore } from "../usage/usage-store.js";
import type { Clock } from "../util/clock.js";

/** Items a conversation of the Conversations API keeps (the oldest go first). */
export const CONVERSATION_MAX_ITEMS = 1000;

/** What a backend is built from. */
export interface BackendSettings {
  /** The sections a backend sizes its stores and counters by. */
  config: Pick<Config, "limits" | "continuity" | "oauth">;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /** The window of the per-minute rate limits, in seconds (60; tests shorten it). */
  windowSeconds: number;
}

/**
 * Where one adapter keeps what outlives a request, chosen in one place (`createAdapter`): in this
 * process (`memoryBackend`), or in the Redis the replicas share (`redisBackend`,
 * docs/architecture/redis.md#redis-topologies). Both give the same record — continuity's stores, the
 * limits' counters, the OAuth server's storage, the poll sharing — so nothing else branches on the
 * topology.
 */
export interface Backend {
  /** Continuity's stores; a stored response holds the Responses API's value (`dialects/responses/stored-value.ts`). */
  stores: ContinuityStores<StoredValue>;
  writes: StoreWrites;
  /** The rate limits' counters; undefined without `RATE_LIMIT_*`. */
  limitCounters: LimitCounters | undefined;
  /** Counters of OAuth attempts (registrations, wrong keys) in windows of `seconds`. */
  attemptCounters(seconds: number): LimitCounters;
  /** Usage per account, workspace, mode and UTC day (docs/governance.md#usage), kept `retentionDays`. */
  usageStore(retentionDays: number): UsageStore;
  /** The OAuth authorization server's storage. */
  oauthStorage(): OAuthStorage;
  /** One poller per workspace for all replicas; undefined in process (or with `CLUSTER_POLLING=off`). */
  pollSharing: PollSharing | undefined;
  /** Whether the shared store answers now (a gauge: always false in process). */
  sharedStoreAvailable(): boolean;
  /** Polling leases this replica holds (a gauge). */
  leasesHeld(): number;
  /** Closes what it opened (connections, the sharing, the counters). */
  close(): Promise<void>;
}
