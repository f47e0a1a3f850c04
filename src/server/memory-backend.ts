import { MemoryBackgroundStore } from "../continuity/background/background-store.js";
import { MemoryConversationsApiStore } from "../continuity/conversations-api/conversations-api-store.js";
import { MemoryResponseStore } from "../continuity/responses/response-store.js";
import { MemoryQueryOwnerStore } from "../continuity/ownership/query-owner-store.js";
import { MemoryThreadStore } from "../continuity/threads/thread-store.js";
import { MemoryLimitCounters } from "../limits/limit-counters.js";
import { MemoryOAuthStorage } from "../oauth/oauth-storage.js";
import { MemoryUsageStore } from "../usage/memory-usage-store.js";
import { type Backend, type BackendSettings, CONVERSATION_MAX_ITEMS } from "./backend.js";

/**
 * Everything in this process (one replica, no `REDIS_*`): bounded, expiring maps; the counters and
 * grants end with the process. Stores in process answer at once, so no write is waited for.
 */
export function memoryBackend(settings: Omit<BackendSettings, "logger" | "metrics">): Backend {
  const { config, clock, windowSeconds } = settings;
  const now = () => clock.now();
  // The quotas' periods follow the adapter's clock (docs/rate-limits.md#quotas).
  const limitCounters = config.limits.rate ? new MemoryLimitCounters(windowSeconds, now) : undefined;
  return {
    stores: {
      threads: new MemoryThreadStore(config.continuity.conversationMaxEntries, now),
      responses: new MemoryResponseStore(config.continuity.responsesMaxEntries, now),
      background: new MemoryBackgroundStore(config.continuity.responsesMaxEntries, now),
      conversations: new MemoryConversationsApiStore(config.continuity.conversationMaxEntries, CONVERSATION_MAX_ITEMS, now),
      owners: new MemoryQueryOwnerStore(config.continuity.conversationMaxEntries, now),
    },
    writes: { waitMs: undefined },
    limitCounters,
    attemptCounters: (seconds) => new MemoryLimitCounters(seconds),
    usageStore: (retentionDays) => new MemoryUsageStore(retentionDays),
    oauthStorage: () => new MemoryOAuthStorage(clock, config.oauth?.memoryMaxBytes),
    pollSharing: undefined,
    sharedStoreAvailable: () => false,
    leasesHeld: () => 0,
    close: async () => {
      await limitCounters?.close();
    },
  };
}
