import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { QueryView, StoredQuery } from "../query-store.js";
import { AnswerPublisher } from "./answer-publisher.js";
import { CentrifugoEndpoint, REALTIME_PATH } from "./centrifugo-endpoint.js";

/** The realtime fields of a query, as the interface names them (docs/architecture/upstream.md#queries). */
export interface ChannelFields {
  channel: string;
  token: string;
  subscription_token: string;
  ws_url: string;
  since: { offset: number; epoch: string };
}

/** The embedded workspace's realtime channel: its endpoint, its publisher, and the fields a create answer carries. */
export interface EmbeddedRealtime {
  /**
   * Starts publishing the query's new turn after what its create answer `shown` holds; the fields to
   * add to that answer (none without a Host).
   */
  open(query: StoredQuery, shown: QueryView, authorization: string, host: string | undefined): ChannelFields | undefined;
  /** The HTTP server's `upgrade` listener. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  readonly endpoint: CentrifugoEndpoint;
  readonly publisher: AnswerPublisher;
  close(): void;
}

/**
 * Builds the realtime side of the embedded workspace: every query carries a channel on the same
 * host and port as the HTTP interface (the `upgrade` of its own server), its answer published
 * word by word there while the list keeps showing it too.
 */
export function createEmbeddedRealtime(options: {
  view: (query: StoredQuery, at: number) => QueryView;
  now: () => number;
  stepDelayMs: number;
}): EmbeddedRealtime {
  const endpoint = new CentrifugoEndpoint(options.now);
  const publisher = new AnswerPublisher(endpoint, options.view, options.now, options.stepDelayMs);
  return {
    endpoint,
    publisher,
    open(query, shown, authorization, host) {
      if (!host) return undefined;
      const channel = `queries:${query.id}`;
      const token = endpoint.connectionToken(authorization);
      const since = endpoint.position(channel);
      publisher.track(query, channel, shown);
      return {
        channel,
        token,
        subscription_token: endpoint.subscriptionToken(token, channel),
        ws_url: `ws://${host}${REALTIME_PATH}`,
        since,
      };
    },
    handleUpgrade: (request, socket, head) => endpoint.handleUpgrade(request, socket, head),
    close() {
      publisher.close();
      endpoint.close();
    },
  };
}
