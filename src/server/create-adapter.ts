import { randomBytes, randomUUID } from "node:crypto";
import type { RequestListener } from "node:http";
import type { Logger } from "pino";
import { createAuthenticator } from "../auth/authenticate.js";
import { AnswerService } from "../answer/answer-service.js";
import type { Config } from "../config/config.js";
import { describeTopology } from "../config/redis-topology.js";
import type { DocumentReader } from "../core/document-reader.js";
import { type ConversationStore, FallbackConversationStore, MemoryConversationStore } from "../stores/conversation-store.js";
import { Conversations } from "../continuity/conversations.js";
import { type LimitCounters, MemoryLimitCounters } from "../limits/limit-counters.js";
import { RateLimits } from "../limits/rate-limits.js";
import { RedisLimitCounters } from "../limits/redis-limit-counters.js";
import { redisKeys } from "../redis/keys.js";
import { openRedis, openSubscriber } from "../redis/redis-connection.js";
import { RedisConversationStore } from "../stores/redis-conversation-store.js";
import { RedisGate } from "../redis/redis-gate.js";
import { RedisPollSharing } from "../redis/redis-poll-sharing.js";
import { RedisResponseStore } from "../stores/redis-response-store.js";
import { FallbackResponseStore, MemoryResponseStore, type ResponseStore } from "../stores/response-store.js";
import { type AppDependencies, createApp } from "../http/app.js";
import { BackgroundResponses } from "../continuity/background-responses.js";
import { type BackgroundStore, MemoryBackgroundStore } from "../continuity/background-store.js";
import { RedisBackgroundStore } from "../continuity/redis-background-store.js";
import { type ConversationItemsStore, MemoryConversationItems } from "../continuity/conversation-items.js";
import { RedisConversationItems } from "../continuity/redis-conversation-items.js";
import { ConcurrencyLimit } from "../limits/concurrency-limit.js";
import { Lifecycle } from "../http/lifecycle.js";
import { observeRequests } from "../http/request-log.js";
import { KeepAliveSweeps } from "../http/sse-writer.js";
import { Metrics } from "../metrics/metrics.js";
import type { OAuthAttemptLimits } from "../oauth/attempt-limits.js";
import { createMetadataFetch, type MetadataFetchOptions } from "../oauth/metadata-fetch.js";
import { MemoryOAuthStorage } from "../oauth/oauth-storage.js";
import { RedisOAuthStorage } from "../oauth/redis-oauth-storage.js";
import { SecretBox } from "../oauth/secret-box.js";
import { type TokenCounter, WorkerTokenCounter } from "../tokens/token-counter.js";
import { QueryWatcher } from "../upstream/query-watcher.js";
import { hostPolicy } from "../upstream/realtime/allowed-hosts.js";
import { RealtimeHub } from "../upstream/realtime/realtime-hub.js";
import { createWorkspaceClient, type WorkspaceClient } from "../upstream/workspace-client.js";
import type { Tracing } from "../telemetry/tracing.js";
import { type Clock, systemClock } from "../util/clock.js";
import { createLogger } from "../util/create-logger.js";
import { packageVersion } from "../util/package-info.js";

/**
 * The OAuth server's storage (Redis when the replicas share one, in process otherwise) and keys
 * (from `OAUTH_SECRET`, or a random secret: grants then end with the process), with `MCP_OAUTH=on`.
 */
function oauthParts(
  config: Config,
  redis: RedisGate | undefined,
  clock: Clock,
  logger: Logger,
  attempts: OAuthAttemptLimits | undefined,
  metadataFetch: ReturnType<typeof createMetadataFetch> | undefined,
): AppDependencies["oauth"] {
  if (!config.mcpOauth || !attempts || !metadataFetch) return undefined;
  let secrets = config.mcpOauth.secrets;
  if (secrets.length === 0) {
    logger.warn("OAUTH_SECRET is not set: OAuth grants are sealed with a random secret and end with this process");
    secrets = [randomBytes(32).toString("base64url")];
  }
  const storage = redis
    ? new RedisOAuthStorage(redis, redisKeys(config.redisKeyPrefix))
    : new MemoryOAuthStorage(clock, config.mcpOauth.memoryMaxBytes);
  return { storage, box: new SecretBox(secrets), attempts, metadataFetch: metadataFetch.fetch };
}

/** How long a replica's lease on a background answer lasts (renewed at a third): past it, another replica takes the answer over. */
const BACKGROUND_LEASE_MS = 3000;
/** How often a follower of a background response looks for events another replica appended. */
const BACKGROUND_FOLLOW_POLL_MS = 100;

/** Items a conversation of the Conversations API keeps (the oldest go first). */
const CONVERSATION_MAX_ITEMS = 1000;

/** Bound on a rate-limit command: past it, an admission counts in process rather than wait. */
const LIMITS_COMMAND_TIMEOUT_MS = 250;

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
  /**
   * Tracing, when the `OTEL_*` variables turn it on (`startTracing`; docs/observability.md). Its
   * owner shuts it down after the adapter. A logger given here should carry its `logFields` as a
   * pino mixin (`createLogger` does) for every log line to have the trace ids.
   */
  tracing?: Tracing | undefined;
  /** The window of the per-minute rate limits, in seconds (60; tests shorten it). */
  rateWindowSeconds?: number;
  /**
   * What the OAuth server's metadata-document fetch resolves names with and trusts (src/oauth/metadata-fetch.ts).
   * Unset in production: the system resolver and CAs, and no special-use address ever. Only a test
   * whose stand-in document server lives on loopback names these: never an environment switch.
   */
  oauthMetadataFetch?: MetadataFetchOptions;
}

/** Wires configuration and effects into a ready app; `upstreamUrl` is the workspace service to call. */
export function createAdapter(config: Config, upstreamUrl: string, effects: AdapterEffects = {}): Adapter {
  const { tracing } = effects;
  const mixin = tracing && (() => tracing.logFields());
  const logger = effects.logger ?? createLogger({ level: config.logLevel, format: config.logFormat, mixin });
  const clock = effects.clock ?? systemClock;
  const limit = new ConcurrencyLimit(config.maxConcurrentRequests, config.maxConcurrentPerWorkspace);
  // The state gauges read parts built below; they are only read at scrape time.
  const metrics: Metrics = new Metrics({
    openStreams: () => lifecycle.openStreams,
    backgroundAnswers: () => background.inFlight,
    waitingQueries: () => watcher.waitingQueries,
    pollers: () => watcher.activePollers,
    realtimeConnections: () => realtime?.openConnections ?? 0,
    realtimeSubscriptions: () => realtime?.activeSubscriptions ?? 0,
    leasesHeld: () => sharing?.leasesHeld ?? 0,
    redisAvailable: () => (redis?.available ? 1 : 0),
    slotsInUse: () => limitCounters?.slotsHeld ?? 0,
    limitsShared: () => (limitCounters?.shared ? 1 : 0),
  });
  const facts = observeRequests(logger, metrics, tracing);
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
      tracing,
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
        ...(tracing ? { detached: <T>(work: () => T) => tracing.withoutLogSpan(work) } : {}),
      });
  // docs/architecture.md#redis-down-or-slow: one command connection for every store, behind one gate.
  const topology = config.redis;
  const connection = { commandTimeoutMs: config.redisCommandTimeoutMs };
  const keys = redisKeys(config.redisKeyPrefix);
  const redis = topology
    ? new RedisGate(openRedis(topology, connection), {
      failuresToDown: 2,
      probeIntervalMs: 500,
      firstConnectMs: 2000,
      deadlineMs: config.redisCommandTimeoutMs,
      clock,
      events: {
        onCommand: (seconds, outcome) => metrics.redisCommandSeconds.observe({ outcome }, seconds),
        onAvailability: (available) => {
          metrics.redisAvailabilityChanges.inc({ state: available ? "up" : "down" });
          if (available) logger.info("Redis answers again");
          else logger.warn("Redis is unreachable: its commands are skipped until it answers (new questions are answered; continuations it alone knows are refused)");
        },
      },
    })
    : undefined;
  if (topology) logger.info({ redis: describeTopology(topology) }, "sharing state between replicas through Redis");
  // docs/upstream-assumptions.md#polling: with Redis, one replica lists each workspace for all.
  const sharing = config.clusterPolling && redis && topology
    ? new RedisPollSharing({
      redis,
      subscriber: openSubscriber(topology, connection, redis.redis),
      keys,
      leaseMs: config.clusterLeaseMs,
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
    tracing,
  });
  // docs/rate-limits.md: counted in Redis when there is one, on a connection of their own whose
  // commands are bounded short (an admission never waits long on a slow Redis: it counts in process
  // for that moment), skipped at once while the gate knows Redis is down; in process otherwise.
  const limitRedis = config.rateLimits && topology
    ? openRedis(topology, { commandTimeoutMs: Math.min(LIMITS_COMMAND_TIMEOUT_MS, config.redisCommandTimeoutMs) })
    : undefined;
  const windowSeconds = effects.rateWindowSeconds ?? 60;
  const limitCounters: LimitCounters | undefined = !config.rateLimits
    ? undefined
    : limitRedis
      ? new RedisLimitCounters({
        redis: limitRedis,
        available: (tag) => redis?.availableFor(tag) ?? true,
        keys,
        windowSeconds,
        slotTtlMs: config.rateLimits.slotTtlMs,
        logger,
        onFallback: (reason) => metrics.rateLimitFallbacks.inc({ reason }),
      })
      : new MemoryLimitCounters(windowSeconds);
  // OAuth attempts (registrations, wrong keys at consent) per client address: the same counters,
  // one per window, in Redis (their own names) when there is one.
  const oauthRedis = config.mcpOauth && topology
    ? limitRedis ?? openRedis(topology, { commandTimeoutMs: Math.min(LIMITS_COMMAND_TIMEOUT_MS, config.redisCommandTimeoutMs) })
    : undefined;
  const attemptWindows = new Map<number, LimitCounters>();
  const attemptCounters = (seconds: number): LimitCounters =>
    oauthRedis
      ? new RedisLimitCounters({
        redis: oauthRedis,
        available: (tag) => redis?.availableFor(tag) ?? true,
        keys,
        windowKey: (key) => keys.oauthAttempts(key),
        windowSeconds: seconds,
        slotTtlMs: LIMITS_COMMAND_TIMEOUT_MS,
        logger,
        onFallback: (reason) => metrics.rateLimitFallbacks.inc({ reason }),
      })
      : new MemoryLimitCounters(seconds);
  const oauthAttempts: OAuthAttemptLimits | undefined = config.mcpOauth
    ? {
      ...config.mcpOauth,
      counters: (seconds) => {
        if (!attemptWindows.has(seconds)) attemptWindows.set(seconds, attemptCounters(seconds));
        return attemptWindows.get(seconds) as LimitCounters;
      },
      onCeiling: (kind) => metrics.oauthCeilings.inc({ kind }),
    }
    : undefined;
  const metadataFetch = config.mcpOauth ? createMetadataFetch(effects.oauthMetadataFetch) : undefined;
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
  const storeAnswersAgain = redis ? { storeAnswersAgain: () => redis.nextAvailable() } : {};
  // With Redis, each replica also remembers what it wrote itself: it continues those while Redis is away.
  const conversationMemory = () => new MemoryConversationStore(config.conversationMaxEntries, () => clock.now());
  const store =
    effects.conversationStore ??
    (redis
      ? new FallbackConversationStore(new RedisConversationStore(redis, keys), conversationMemory())
      : conversationMemory());
  const conversations = new Conversations(store, {
    ttlSeconds: config.conversationTtlSeconds,
    logger,
    clock,
    // A store in process answers at once; one elsewhere (Redis, a caller's) gets a bound.
    writeWaitMs: redis || effects.conversationStore ? config.storeWriteWaitMs : undefined,
    onRemembered: (outcome) => metrics.storeWrites.inc({ store: "conversation", outcome }),
    onRefused: () => metrics.continuationsRefused.inc({ store: "conversation" }),
    ...storeAnswersAgain,
  });
  const responseMemory = () => new MemoryResponseStore(config.responsesMaxEntries, () => clock.now());
  const responses =
    effects.responseStore ??
    (redis
      ? new FallbackResponseStore(new RedisResponseStore(redis, keys), responseMemory())
      : responseMemory());
  // docs/responses-api.md#background-mode: records and event logs in Redis when there is one, so that any replica follows and cancels.
  const backgroundRecords: BackgroundStore = redis
    ? new RedisBackgroundStore(redis, keys)
    : new MemoryBackgroundStore(config.responsesMaxEntries, () => clock.now());
  const background = new BackgroundResponses({
    store: backgroundRecords,
    clock,
    logger,
    ttlSeconds: config.responsesTtlSeconds,
    replica: `replica-${randomUUID()}`,
    leaseMs: BACKGROUND_LEASE_MS,
    followPollMs: BACKGROUND_FOLLOW_POLL_MS,
  });
  // docs/responses-api.md#conversations: in Redis when there is one, so that any replica continues a conversation.
  const conversationItems: ConversationItemsStore = redis
    ? new RedisConversationItems(redis, keys, CONVERSATION_MAX_ITEMS)
    : new MemoryConversationItems(config.conversationMaxEntries, CONVERSATION_MAX_ITEMS, () => clock.now());
  const app = createApp({
    conversationItems,
    config,
    background,
    backgroundRecords,
    answers,
    client,
    logger,
    clock,
    conversations,
    responses,
    ...storeAnswersAgain,
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
    oauth: oauthParts(config, redis, clock, logger, oauthAttempts, metadataFetch),
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
        // Background answers are left to another replica, not failed by the connections closing below.
        background.close();
        realtime?.close();
        await sharing?.close();
        await Promise.all([client.close(), conversations.close(), responses.close(), tokens.close(), limitCounters?.close()]);
        await metadataFetch?.close();
        limitRedis?.disconnect();
        if (oauthRedis !== limitRedis) oauthRedis?.disconnect();
        redis?.close();
      })()),
  };
}
