import type { QuerySnapshot } from "../core/query-snapshot.js";
import type { RealtimeChannel } from "../core/realtime-channel.js";
import { sourcesIn } from "./normalize-sources.js";
import type { UpstreamQuery } from "./query-schemas.js";

/** Turns an upstream query (create answer or list item) into a snapshot. */
export function toQuerySnapshot(query: UpstreamQuery): QuerySnapshot {
  const steps = query.steps ?? [];
  const status = (query.status ?? "").toUpperCase();
  const channel = realtimeChannelOf(query);
  // The query's sources, then each step's, in one array.
  const sources = sourcesIn(query);
  for (const step of steps) sourcesIn(step, sources);
  return {
    id: query.id,
    status: status === "PENDING" || status === "PROCESSED" || status === "FAILED" ? status : "PROCESSING",
    output: query.output ?? "",
    steps,
    sources,
    usage: query.usage
      ? {
          prompt_tokens: query.usage.prompt_tokens ?? undefined,
          completion_tokens: query.usage.completion_tokens ?? undefined,
        }
      : undefined,
    ...(channel ? { channel } : {}),
  };
}

/**
 * The query's realtime channel (docs/upstream-assumptions.md#realtime), when it names an endpoint,
 * a channel and a position to start from: without `since`, what was published between the create
 * and the subscription would be missed, so such a query is polled alone. Empty tokens are kept
 * (an endpoint may accept anonymous connections).
 */
export function realtimeChannelOf(query: UpstreamQuery): RealtimeChannel | undefined {
  if (!query.ws_url || !query.channel || !query.since) return undefined;
  return {
    wsUrl: query.ws_url,
    token: query.token ?? "",
    channel: query.channel,
    subscriptionToken: query.subscription_token ?? "",
    since: { offset: query.since.offset, epoch: query.since.epoch },
  };
}
