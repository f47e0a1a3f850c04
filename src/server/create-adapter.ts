import type { RequestListener } from "node:http";
import type { Logger } from "pino";
import { createAuthenticator } from "../auth/authenticate.js";
import { AnswerService } from "../answer/answer-service.js";
import type { Config } from "../config/config.js";
import type { DocumentReader } from "../core/document-reader.js";
import { type ConversationStore, MemoryConversationStore } from "../stores/conversation-store.js";
import { Conversations } from "../conversations/conversations.js";
import { type LimitCounters, MemoryLimitCounters } from "../limits/limit-counters.js";
import { RateLimits } from "../limits/rate-limits.js";
import { RedisLimitCounters } from "../limits/redis-limit-counters.js";
import { openRedis } from "../stores/redis-connection.js";
import { RedisConversationStore } from "../stores/redis-conversation-store.js";
import { RedisPollSharing } from "../stores/redis-poll-sharing.js";
import { RedisResponseStore } from "../stores/redis-response-store.js";
import { MemoryResponseStore, type ResponseStore } from "../stores/response-store.js";
import { createApp } from "../http/app.js";
import { ConcurrencyLimit } from "../http/concurrency-limit.js";
import { Lifecycle } from "../http/lifecycle.js";
import { ResponseFacts } from "../http/request-log.js";
import { KeepAliveSweeps } from "../http/sse-writer.js";
import { Metrics } from "../metrics/metrics.js";
import { type TokenCounter, WorkerTokenCounter } from "../tokens/token-counter.js";
import { QueryWatcher } from "../upstream/query-watcher.js";
import { hostPolicy } from "../upstream/realtime/allowed-hosts.js";
import { RealtimeHub } from "../upstream/realtime/realtime-hub.js";
import { createWorkspaceClient, type WorkspaceClient } from "../upstream/workspace-client.js";
import { type Clock, systemClock } from "../util/clock.js";
import { createLogger } from "../util/create-logger.js";
import { packageVersion } from "../util/package-info.js";

/** The wired adapter: the app to serve and the parts a test or the entry point may reach. */
export interface Adapter {
  /** The request listener to serve (`http.createServer(adapter.app)`). */
  app: RequestListener;
  client: WorkspaceClient;
  watcher: QueryWatcher;
  /** Follows queries' realtime channels; undefined with `REALTIME=off`. */
  realtime: RealtimeHub | undefined;
  conversations: Conversations;
  lifecycle: Lifecycle;
  limit: ConcurrencyLimit;
  /** Limits per client key and workspace; undefined without `RATE_LIMIT_*`. */
  rateLimits: RateLimits | undefined;
  metrics: Metrics;
  logger: Logger;
  close(): Promise<void>;
}

/** Effects a caller may replace (tests inject a silent logger, a clock, fixed ids). */
export interface AdapterEffects {
  logger?: Logger;
  clock?: Clock;
  newQueryId?: () => string;
  client?: WorkspaceClient;
  conversationStore?: ConversationStore;
  responseStore?: ResponseStore;
  /** The embedded workspace's documents, served at `/documents/...` for citation links. */
  documents?: DocumentReader;
  /** The adapter's address as browsers reach it (its document page links start with it). */
  publicUrl?: () => string;
  tokens?: TokenCounter;
  /** The window of the per-minute rate limits, in seconds (60; tests shorten it). */
  rateWindowSeconds?: number;
}

/** Wires configuration and effects into a ready app; `upstreamUrl` is the workspace service to call. */
export function createAdapter(config: Config, upstreamUrl: string, effects: AdapterEffects = {}): Adapter {
  const logger = effects.logger ?? createLogger({ level: config.logLevel, format: config.logFormat });
  const clock = effects.clock ?? systemClock;
  const limit = new ConcurrencyLimit(config.maxConcurrentRequests, config.maxConcurrentPerWorkspace);
  // The state gauges read parts built below; they are only read at scrape time.
  const metrics: Metrics = new Metrics({
    openStreams: () => lifecycle.openStreams,
    waitingQueries: () => watcher.waitingQueries,
    pollers: () => watcher.activePollers,
    realtimeConnections: () => realtime?.openConnections ?? 0,
    realtimeSubscriptions: () => realtime?.activeSubscriptions ?? 0,
    leasesHeld: () => sharing?.leasesHeld ?? 0,
    slotsInUse: () => limitCounters?.slotsHeld ?? 0,
    limitsShared: () => (limitCounters?.shared ? 1 : 0),
  });
  const facts = new ResponseFacts(logger, metrics);
  const lifecycle = new Lifecycle(facts);
  const client =
    effects.client ??
    createWorkspaceClient({
      baseUrl: upstreamUrl,
      timeoutMs: config.upstreamTimeoutMs,
      connectTimeoutMs: config.upstreamConnectTimeoutMs,
      maxResponseBytes: config.upstreamMaxBodyBytes,
      connections: config.upstreamConnections,
      keepAliveMs: config.upstreamKeepAliveMs,
      onCall: ({ endpoint, outcome, seconds }) => {
        metrics.upstreamCalls.inc({ endpoint, outcome });
        metrics.upstreamSeconds.observe({ endpoint }, seconds);
      },
    });
  // docs/architecture.md#the-realtime-channel: followed only to the hosts the policy allows.
  const realtime =
    config.realtime === "off"
      ? undefined
      : new RealtimeHub({
        policy: hostPolicy(upstreamUrl, config.realtimeAllowedHosts),
        logger,
        onFallback: (reason) => metrics.realtimeFallbacks.inc({ reason }),
        onPublication: () => metrics.realtimePublications.inc(),
      });
  // docs/upstream-assumptions.md#polling: with Redis, one replica lists each workspace for all.
  const sharing = config.clusterPolling && config.redisUrl
    ? new RedisPollSharing({
      url: config.redisUrl,
      prefix: config.redisKeyPrefix,
      leaseMs: config.clusterLeaseMs,
      logger,
      now: () => clock.now(),
      events: {
        onLease: (change) => metrics.leaseChanges.inc({ change }),
        onPublished: (items) => metrics.snapshotsPublished.inc(items),
        onReceived: (items) => metrics.snapshotsReceived.inc(items),
        onFallback: (reason) => metrics.clusterFallbacks.inc({ reason }),
      },
    })
    : undefined;
  const watcher = new QueryWatcher({
    client,
    clock,
    pollIntervalMinMs: config.pollIntervalMinMs,
    pollIntervalMaxMs: config.pollIntervalMaxMs,
    maxListPages: config.maxListPages,
    onPoll: ({ pages }) => metrics.listCalls.inc(pages),
    onPollError: (error) => logger.warn({ err: { message: (error as Error).message } }, "poll failed"),
    ...(realtime ? { realtime } : {}),
    ...(sharing ? { sharing } : {}),
  });
  // README "Rate limits": counted in Redis with REDIS_URL (its own connection), in process otherwise.
  const limitRedis = config.rateLimits && config.redisUrl ? openRedis(config.redisUrl) : undefined;
  const windowSeconds = effects.rateWindowSeconds ?? 60;
  const limitCounters: LimitCounters | undefined = !config.rateLimits
    ? undefined
    : limitRedis
      ? new RedisLimitCounters({
        redis: limitRedis,
        prefix: config.redisKeyPrefix,
        windowSeconds,
        slotTtlMs: config.rateLimits.slotTtlMs,
        logger,
        onFallback: () => metrics.rateLimitFallbacks.inc(),
      })
      : new MemoryLimitCounters(windowSeconds);
  const rateLimits = config.rateLimits && limitCounters
    ? new RateLimits(config.rateLimits, limitCounters, { onLimited: (kind, workspace) => metrics.limited(kind, workspace) })
    : undefined;
  const tokens = effects.tokens ?? new WorkerTokenCounter(undefined, { isIdle: () => limit.inFlight <= 1 });
  const answers = new AnswerService({
    client,
    watcher,
    queryTimeoutMs: config.queryTimeoutMs,
    maxListPages: config.maxListPages,
    tokens,
    onQueryEnd: (mode, state) => metrics.queries.inc({ mode, state }),
  });
  const store =
    effects.conversationStore ??
    (config.redisUrl
      ? new RedisConversationStore(config.redisUrl, `${config.redisKeyPrefix}conversation:`)
      : new MemoryConversationStore(config.conversationMaxEntries, () => clock.now()));
  const conversations = new Conversations(store, { ttlSeconds: config.conversationTtlSeconds, logger });
  const responses =
    effects.responseStore ??
    (config.redisUrl
      ? new RedisResponseStore(config.redisUrl, config.redisKeyPrefix)
      : new MemoryResponseStore(config.responsesMaxEntries, () => clock.now()));
  const app = createApp({
    config,
    answers,
    client,
    logger,
    clock,
    conversations,
    responses,
    lifecycle,
    facts,
    sweeps: new KeepAliveSweeps(),
    limit,
    rateLimits,
    metrics,
    authenticate: createAuthenticator({ workspaceApiKey: config.workspaceApiKey, adapterApiKeys: config.adapterApiKeys }),
    startedAt: Math.floor(clock.now() / 1000),
    version: packageVersion(),
    ...(effects.newQueryId ? { newQueryId: effects.newQueryId } : {}),
    ...(effects.documents && effects.publicUrl ? { documents: effects.documents, documentPage: effects.publicUrl } : {}),
  });
  let closing: Promise<void> | undefined;
  return {
    app,
    client,
    watcher,
    realtime,
    conversations,
    lifecycle,
    limit,
    rateLimits,
    metrics,
    logger,
    // Once: a shutdown and a caller's own close may overlap, and a closed dispatcher rejects a second close.
    close: () =>
      (closing ??= (async () => {
        realtime?.close();
        await sharing?.close();
        await Promise.all([client.close(), conversations.close(), responses.close(), tokens.close(), limitCounters?.close()]);
        limitRedis?.disconnect();
      })()),
  };
}
