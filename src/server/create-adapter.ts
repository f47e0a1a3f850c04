import { randomBytes } from "node:crypto";
import type { RequestListener } from "node:http";
import type { Logger } from "pino";
import { AnswerService } from "../answer/answer-service.js";
import type { Config, OAuthSettings } from "../config/config.js";
import { type Continuity, type ContinuityStores, createContinuity } from "../continuity/continuity.js";
import type { StoredValue } from "../dialects/responses/stored-value.js";
import type { DocumentReader } from "../core/document-reader.js";
import { DocumentLinkSigner } from "../auth/document-links.js";
import { type AppDependencies, type AppListeners, createApp } from "../http/app.js";
import { metricsListener } from "../http/metrics-exposition.js";
import { Lifecycle } from "../http/lifecycle.js";
import { observeRequests } from "../http/request-log.js";
import { KeepAliveSweeps } from "../http/sse-writer.js";
import { ConcurrencyLimit } from "../limits/concurrency-limit.js";
import { RateLimits } from "../limits/rate-limits.js";
import { Metrics } from "../metrics/metrics.js";
import type { LimitCounters } from "../limits/limit-counters.js";
import type { OAuthAttemptLimits } from "../oauth/attempt-limits.js";
import { createMetadataFetch, type MetadataFetchOptions } from "../oauth/metadata-fetch.js";
import { SecretBox } from "../oauth/secret-box.js";
import { traceLogMixin, type Tracing } from "../telemetry/tracing.js";
import { O200kTokenCounter, type TokenCounter } from "../tokens/token-counter.js";
import { adapterSchemas } from "../structured/schema-worker-pool.js";
import type { SchemaService } from "../structured/schema-service.js";
import type { QueryWatcher } from "../upstream/query-watcher.js";
import type { RealtimeHub } from "../upstream/realtime/realtime-hub.js";
import type { WorkspaceClient } from "../upstream/workspace-client.js";
import { type Clock, systemClock } from "../util/clock.js";
import { createLogger } from "../util/create-logger.js";
import { type Ids, randomIds } from "../util/ids.js";
import { packageVersion } from "../util/package-info.js";
import type { Backend } from "./backend.js";
import { memoryBackend } from "./memory-backend.js";
import { redisBackend } from "./redis-backend.js";
import { auditOf, keyAuthentication, usageOf } from "./governance.js";
import { realtimeOf, watcherOf, workspaceClientOf } from "./upstream-parts.js";
import { keepStringMethodsFast } from "../util/string-methods.js";

/** The wired adapter: the app to serve and the parts a test or the entry point may reach. */
export interface Adapter {
  /** The request listener to serve (`http.createServer(adapter.app)`). */
  app: RequestListener;
  /** The listener of upgrade requests (`server.on("upgrade", adapter.upgrade)`): the Responses API's WebSocket mode. */
  upgrade: AppListeners["upgrade"];
  /** The listener of `METRICS_PORT` (`GET /metrics` alone), when `/metrics` has a port of its own. */
  metricsApp: RequestListener | undefined;
  client: WorkspaceClient;
  watcher: QueryWatcher;
  /** Follows queries' realtime channels; undefined with `REALTIME=off`. */
  realtime: RealtimeHub | undefined;
  continuity: Continuity<StoredValue>;
  lifecycle: Lifecycle;
  limit: ConcurrencyLimit;
  /** Limits per client key and workspace; undefined without `RATE_LIMIT_*`. */
  rateLimits: RateLimits | undefined;
  metrics: Metrics;
  logger: Logger;
  close(): Promise<void>;
}

/** Effects a caller may replace (tests inject a silent logger, a clock, fixed ids, a store of their own). */
export interface AdapterEffects {
  logger?: Logger;
  clock?: Clock;
  ids?: Ids;
  client?: WorkspaceClient;
  /** Continuity stores that replace the backend's (a test's failing or stalling store): a write that ends an answer is then waited for up to its bound. */
  stores?: Partial<ContinuityStores<StoredValue>>;
  /** The embedded workspace's documents, served at `/documents/...` for citation links. */
  documents?: DocumentReader;
  /** The adapter's address as browsers reach it (its document page links start with it). */
  publicUrl?: () => string;
  tokens?: TokenCounter;
  /** Where the caller's schemas are checked (a test's own); the schema worker when not given. */
  schemas?: SchemaService;
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

/**
 * Wires configuration and effects into a ready app; `upstreamUrl` is the workspace service to call.
 * The topology is chosen here, once: a Redis backend when `REDIS_*` names one, the memory backend
 * otherwise (docs/architecture/redis.md#redis-topologies).
 */
export function createAdapter(config: Config, upstreamUrl: string, effects: AdapterEffects = {}): Adapter {
  // Every module is loaded by now, ioredis among them, which leaves string methods slow to look up.
  keepStringMethodsFast();
  const { tracing } = effects;
  const mixin = tracing && traceLogMixin(tracing);
  const logger = effects.logger ?? createLogger({ ...config.log, mixin });
  const clock = effects.clock ?? systemClock;
  const ids = effects.ids ?? randomIds;
  // docs/governance.md#who-asks: the listed keys, their file read first (a bad one stops start-up before anything opens).
  const keys = keyAuthentication(config.auth, logger, config.metrics.apiKey);
  const { authenticate, keyFile } = keys;
  const limit = new ConcurrencyLimit(config.limits.maxConcurrentRequests, config.limits.maxConcurrentPerWorkspace);
  // The state gauges read parts built below; they are only read at scrape time.
  const metrics: Metrics = new Metrics({
    openStreams: () => lifecycle.openStreams,
    backgroundAnswers: () => continuity.background.inFlight,
    waitingQueries: () => watcher.waitingQueries,
    pollers: () => watcher.activePollers,
    realtimeConnections: () => realtime?.openConnections ?? 0,
    realtimeSubscriptions: () => realtime?.activeSubscriptions ?? 0,
    leasesHeld: () => backend.leasesHeld(),
    redisAvailable: () => (backend.sharedStoreAvailable() ? 1 : 0),
    slotsInUse: () => backend.limitCounters?.slotsHeld ?? 0,
    limitsShared: () => (backend.limitCounters?.shared ? 1 : 0),
    droppedSpans: () => tracing?.droppedSpans,
  });
  const version = packageVersion();
  // docs/governance.md#the-audit-trail: a subscriber of each request's end, like the log line.
  const audit = auditOf(config.governance.audit, { clock, logger, metrics, version });
  const contexts = observeRequests(logger, metrics, tracing, audit?.subscriber);
  const lifecycle = new Lifecycle();
  const client = effects.client ?? workspaceClientOf(config.upstream, upstreamUrl, metrics, tracing);
  const realtime = realtimeOf(config.upstream, upstreamUrl, logger, metrics, tracing);
  const settings = { config, clock, logger, metrics, windowSeconds: effects.rateWindowSeconds ?? 60 };
  const backend: Backend = config.redis ? redisBackend(config.redis, settings) : memoryBackend(settings);
  const watcher = watcherOf(config.upstream, { client, clock, metrics, logger, realtime, sharing: backend.pollSharing, tracing });
  const onLimited = (kind: string, workspace: string) => metrics.limited(kind, workspace);
  const { limitCounters } = backend;
  const rateLimits = config.limits.rate && limitCounters
    ? new RateLimits(config.limits.rate, limitCounters, { onLimited }, { now: () => clock.now(), newId: () => ids.charge() })
    : undefined;
  // docs/governance.md#usage: per account, in the backend's usage store (Redis day buckets the replicas share, or memory).
  const usage = usageOf(config, { store: backend.usageStore, clock, ids, logger, metrics, wake: backend.writes.answersAgain });
  const tokens = effects.tokens ?? new O200kTokenCounter();
  // The caller's schemas are checked and answers validated off the event loop (docs/structured-answers.md#the-schema-is-untrusted).
  const { schemaMaxBytes: maxBytes, schemaMaxDepth: maxDepth } = config.answers.structured;
  const schemas = effects.schemas ?? adapterSchemas({ maxBytes, maxDepth });
  const answers = new AnswerService({
    client,
    watcher,
    queryTimeoutMs: config.upstream.queryTimeoutMs,
    maxListPages: config.upstream.maxListPages,
    tokens,
    onQueryEnd: (mode, state) => metrics.queries.inc({ mode, state }),
  });
  const metadataFetch = config.oauth ? createMetadataFetch(effects.oauthMetadataFetch) : undefined;
  // A store in process answers at once; one elsewhere (Redis, a test's) gets a bound.
  const writes = { ...backend.writes, ...(effects.stores ? { waitMs: config.continuity.storeWriteWaitMs } : {}) };
  const continuity = createContinuity({ ...backend.stores, ...effects.stores }, {
    config: config.continuity,
    writes,
    clock,
    ids,
    logger,
    events: {
      onWrite: (store, outcome) => metrics.storeWrites.inc({ store, outcome }),
      onRefused: (store) => metrics.continuationsRefused.inc({ store }),
    },
  });
  const { listener: app, upgrade } = createApp({
    config,
    answers,
    tokens,
    schemas,
    continuity,
    ids,
    client,
    logger,
    clock,
    lifecycle,
    contexts,
    sweeps: new KeepAliveSweeps(),
    limit,
    rateLimits,
    metrics,
    authenticate,
    usage: usage.endpoint,
    startedAt: Math.floor(clock.now() / 1000),
    version,
    ...(effects.documents && effects.publicUrl ? { documents: effects.documents, documentPage: effects.publicUrl } : {}),
    // Where keys are listed, the document page asks for one: the answers' links carry a signature instead.
    documentLinks: effects.documents && keys.listing ? new DocumentLinkSigner() : undefined,
    oauth: oauthParts(config.oauth, backend, logger, metrics, metadataFetch, keys.reservedKey),
  });
  const metricsApp = config.metrics.port === undefined ? undefined : metricsListener(metrics, config.metrics, config.server);
  let closing: Promise<void> | undefined;
  return {
    app,
    upgrade,
    metricsApp,
    client,
    watcher,
    realtime,
    continuity,
    lifecycle,
    limit,
    rateLimits,
    metrics,
    logger,
    // Once: a shutdown and a caller's own close may overlap, and a closed dispatcher rejects a second close.
    close: () =>
      (closing ??= (async () => {
        // Background answers are left to another replica, not failed by the connections closing below.
        const continued = continuity.close();
        keyFile?.close();
        realtime?.close();
        await Promise.all([continued, client.close(), tokens.close(), schemas.close(), metadataFetch?.close()]);
        // The usage writes under way and the audit records go before the connections they use.
        await usage.close();
        await audit?.close();
        await backend.close();
      })()),
  };
}

/**
 * The OAuth server's storage and attempt counters (the backend's, one set per window), keys (from
 * `OAUTH_SECRET`, or a random secret: grants then end with the process) and metadata-document
 * fetch, with `MCP_OAUTH=on`.
 */
function oauthParts(
  oauth: OAuthSettings | undefined,
  backend: Backend,
  logger: Logger,
  metrics: Metrics,
  metadataFetch: ReturnType<typeof createMetadataFetch> | undefined,
  reservedKey: (key: string) => boolean,
): AppDependencies["oauth"] {
  if (!oauth || !metadataFetch) return undefined;
  let secrets = oauth.secrets;
  if (secrets.length === 0) {
    logger.warn("OAUTH_SECRET is not set: OAuth grants are sealed with a random secret and end with this process");
    secrets = [randomBytes(32).toString("base64url")];
  }
  const windows = new Map<number, LimitCounters>();
  const attempts: OAuthAttemptLimits = {
    ...oauth,
    counters: (seconds) => {
      if (!windows.has(seconds)) windows.set(seconds, backend.attemptCounters(seconds));
      return windows.get(seconds) as LimitCounters;
    },
    onCeiling: (kind) => metrics.oauthCeilings.inc({ kind }),
  };
  const box = new SecretBox(secrets);
  return { storage: backend.oauthStorage(), box, attempts, metadataFetch: metadataFetch.fetch, reservedKey };
}
