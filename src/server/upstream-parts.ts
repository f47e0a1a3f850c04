import type { Logger } from "pino";
import type { UpstreamSettings } from "../config/config.js";
import type { Metrics } from "../metrics/metrics.js";
import type { Tracing } from "../telemetry/tracing.js";
import { QueryWatcher } from "../upstream/query-watcher.js";
import { hostPolicy } from "../upstream/realtime/allowed-hosts.js";
import { RealtimeHub } from "../upstream/realtime/realtime-hub.js";
import { createWorkspaceClient, type WorkspaceClient } from "../upstream/workspace-client.js";
import type { Clock } from "../util/clock.js";
import type { Backend } from "./backend.js";
import { errorMessage } from "../util/error-message.js";

// The adapter's upstream parts, wired from the upstream settings by `createAdapter` (create-adapter.ts).

/** The query watcher (docs/architecture/upstream.md#the-client-and-the-watcher): its polls counted, their failures logged, shared where the backend can. */
export function watcherOf(
  upstream: UpstreamSettings,
  parts: {
    client: WorkspaceClient;
    clock: Clock;
    metrics: Metrics;
    logger: Logger;
    realtime: RealtimeHub | undefined;
    sharing: Backend["pollSharing"];
    tracing: Tracing | undefined;
  },
): QueryWatcher {
  const { client, clock, metrics, logger, realtime, sharing, tracing } = parts;
  return new QueryWatcher({
    client,
    clock,
    pollIntervalMinMs: upstream.pollIntervalMinMs,
    pollIntervalMaxMs: upstream.pollIntervalMaxMs,
    maxListPages: upstream.maxListPages,
    onPoll: ({ pages }) => metrics.listCalls.inc(pages),
    onPollError: (error) => logger.warn({ err: { message: errorMessage(error) } }, "poll failed"),
    ...(realtime ? { realtime } : {}),
    ...(sharing ? { sharing } : {}),
    tracing,
  });
}

/** The workspace client (docs/architecture/upstream.md#the-client-and-the-watcher), its calls counted and timed. */
export function workspaceClientOf(
  upstream: UpstreamSettings,
  upstreamUrl: string,
  metrics: Metrics,
  tracing: Tracing | undefined,
): WorkspaceClient {
  return createWorkspaceClient({
    baseUrl: upstreamUrl,
    timeoutMs: upstream.timeoutMs,
    connectTimeoutMs: upstream.connectTimeoutMs,
    maxResponseBytes: upstream.maxResponseBytes,
    connections: upstream.connections,
    keepAliveMs: upstream.keepAliveMs,
    tracing,
    onCall: ({ endpoint, outcome, seconds }) => {
      metrics.upstreamCalls.inc({ endpoint, outcome });
      metrics.upstreamSeconds.observe({ endpoint }, seconds);
    },
  });
}

/** The realtime channels' hub (docs/architecture/upstream.md#the-realtime-channel): followed only to the hosts the policy allows; none with `REALTIME=off`. */
export function realtimeOf(
  upstream: UpstreamSettings,
  upstreamUrl: string,
  logger: Logger,
  metrics: Metrics,
  tracing: Tracing | undefined,
): RealtimeHub | undefined {
  if (upstream.realtime === "off") return undefined;
  return new RealtimeHub({
    policy: hostPolicy(upstreamUrl, upstream.realtimeAllowedHosts),
    logger,
    onFallback: (reason) => metrics.realtimeFallbacks.inc({ reason }),
    onPublication: () => metrics.realtimePublications.inc(),
    ...(tracing ? { detached: <T>(work: () => T) => tracing.detached(work) } : {}),
  });
}
