import { Centrifuge, type Subscription } from "centrifuge";
import type { Logger } from "pino";
import WebSocket from "ws";
import { credentialHash } from "../../auth/credential-hash.js";
import type { RealtimeChannel } from "../../core/realtime-channel.js";
import { type HostPolicy, originOf, refusalOf } from "./allowed-hosts.js";

/** Why a query's channel stopped being followed, or was never followed (a metric label). */
export type FallbackReason =
  | "host_not_allowed"
  | "connect_failed"
  | "token_refused"
  | "subscribe_refused"
  | "channel_busy"
  | "unrecoverable"
  | "disconnected"
  | "diverged"
  | "silent";

/** What a subscriber hears of its channel. Every callback comes from the connection's events. */
export interface ChannelListener {
  /** One publication, with its stream offset when the endpoint gives one. */
  publication(data: unknown, offset: number | undefined): void;
  /** Subscribed and live: at first, or again after a dropped connection was recovered. */
  subscribed(): void;
  /** The connection dropped; the client is reconnecting and will recover from the last offset. */
  interrupted(): void;
  /** The channel is given up (already reported): the query is polled alone from now on. */
  failed(reason: FallbackReason): void;
}

/** A live subscription: `close` unsubscribes, and disconnects the connection when it was its last. */
export interface ChannelSubscription {
  close(): void;
}

/** What the watcher needs of the realtime side (a fake in unit tests). */
export interface RealtimeSubscriber {
  /** Subscribes to a query's channel; null when it may not or cannot be followed (already reported). */
  subscribe(channel: RealtimeChannel, listener: ChannelListener): ChannelSubscription | null;
  /** Records a fallback the subscriber decided itself (the channel disagreed, or went silent). */
  fellBack(reason: FallbackReason, channel: RealtimeChannel): void;
}

/** Settings of the hub. */
export interface RealtimeHubOptions {
  policy: HostPolicy;
  logger: Logger;
  /** Told of every fallback (metrics). */
  onFallback?: (reason: FallbackReason) => void;
  /** Told of every publication received (metrics). */
  onPublication?: () => void;
  /** Reconnect and resubscribe backoff, and the protocol's command timeout (tests shorten them). */
  minReconnectDelayMs?: number;
  maxReconnectDelayMs?: number;
  timeoutMs?: number;
  /** Extra time past the endpoint's ping interval before a connection counts as dead. */
  maxServerPingDelayMs?: number;
  /**
   * Runs a connection's start outside the log span of the request that opens it (with tracing:
   * a connection is shared, so what it logs later is no one request's).
   */
  detached?: <T>(work: () => T) => T;
}

/** One subscription of one connection. */
interface Entry {
  channel: RealtimeChannel;
  subscription: Subscription;
  listener: ChannelListener;
}

/** One Centrifugo connection, shared by every subscription that uses its (`ws_url`, token). */
interface Connection {
  key: string;
  origin: string;
  client: Centrifuge;
  entries: Map<string, Entry>;
  connected: boolean;
  closed: boolean;
}

/** Disconnect codes that mean the connection token was refused: 3500 (invalid token) and 1 (unauthorized, as after 109). */
const TOKEN_REFUSED = new Set([1, 3500]);

/**
 * Follows queries' realtime channels with the real `centrifuge` client over `ws`
 * (docs/architecture/upstream.md#the-realtime-channel): one connection per (`ws_url`, token), shared and
 * reference-counted by its subscriptions, disconnected as soon as the last one closes, so that no
 * socket or timer outlives its last request. Only hosts the policy allows are contacted. Every
 * fault ends in `failed` on the listeners and a polled answer; nothing here reaches a client.
 * Tokens are kept only inside the client: keys hold a hash, logs hold the endpoint's origin.
 */
export class RealtimeHub implements RealtimeSubscriber {
  private readonly connections = new Map<string, Connection>();
  /** Faults already logged at warn level (reason and origin), bounded; later ones log at debug. */
  private readonly logged = new Set<string>();
  private subscriptions = 0;

  constructor(private readonly options: RealtimeHubOptions) {}

  /** Connections open or opening now. */
  get openConnections(): number {
    return this.connections.size;
  }

  /** Subscriptions held now. */
  get activeSubscriptions(): number {
    return this.subscriptions;
  }

  subscribe(channel: RealtimeChannel, listener: ChannelListener): ChannelSubscription | null {
    const refusal = refusalOf(channel.wsUrl, this.options.policy);
    if (refusal) {
      this.report("host_not_allowed", originOf(channel.wsUrl), refusal, "info");
      return null;
    }
    const key = `${channel.wsUrl}\u0000${credentialHash(channel.token)}`;
    const connection = this.connections.get(key) ?? this.open(key, channel);
    if (connection.entries.has(channel.channel)) {
      // The client holds one subscription per channel: a second watch of the same query is polled.
      this.report("channel_busy", connection.origin, "the channel is already followed", "debug");
      this.releaseIfUnused(connection);
      return null;
    }
    const subscription = connection.client.newSubscription(channel.channel, {
      token: channel.subscriptionToken,
      since: { offset: channel.since.offset, epoch: channel.since.epoch },
      minResubscribeDelay: this.options.minReconnectDelayMs ?? 200,
      maxResubscribeDelay: this.options.maxReconnectDelayMs ?? 5000,
    });
    const entry: Entry = { channel, subscription, listener };
    connection.entries.set(channel.channel, entry);
    this.subscriptions += 1;
    this.listen(connection, entry);
    subscription.subscribe();
    if (connection.client.state === "disconnected") {
      const { client } = connection;
      if (this.options.detached) this.options.detached(() => client.connect());
      else client.connect();
    }
    let closed = false;
    return {
      close: () => {
        if (closed) return;
        closed = true;
        this.remove(connection, entry);
      },
    };
  }

  fellBack(reason: FallbackReason, channel: RealtimeChannel): void {
    this.report(reason, originOf(channel.wsUrl), "following the list alone", "debug");
  }

  /** Closes every connection (the adapter is shutting down). */
  close(): void {
    for (const connection of [...this.connections.values()]) {
      for (const entry of [...connection.entries.values()]) this.remove(connection, entry);
    }
  }

  private open(key: string, channel: RealtimeChannel): Connection {
    const client = new Centrifuge(channel.wsUrl, {
      token: channel.token,
      websocket: WebSocket,
      name: "workspace-openai-adapter",
      minReconnectDelay: this.options.minReconnectDelayMs ?? 200,
      maxReconnectDelay: this.options.maxReconnectDelayMs ?? 5000,
      timeout: this.options.timeoutMs ?? 5000,
      maxServerPingDelay: this.options.maxServerPingDelayMs ?? 10_000,
    });
    const origin = originOf(channel.wsUrl);
    const connection: Connection = { key, origin, client, entries: new Map(), connected: false, closed: false };
    this.connections.set(key, connection);
    client.on("connected", () => {
      connection.connected = true;
    });
    // Before the first connect succeeds, any failure means the endpoint cannot be reached now:
    // waiting for the client's reconnects would only delay nothing, since polling runs anyway.
    client.on("error", (context) => {
      if (connection.connected) return;
      if (context.type === "transport") this.fail(connection, "connect_failed", "could not connect");
      // An expired connection token (109): the client would only try again with the same one.
      else if (context.type === "connect" && context.error.code === 109) this.fail(connection, "token_refused", "109 token expired");
    });
    client.on("connecting", (context) => {
      if (!connection.connected && context.code !== 0) this.fail(connection, "connect_failed", context.reason);
    });
    client.on("disconnected", (context) => {
      if (context.code === 0) return; // our own disconnect()
      this.fail(connection, TOKEN_REFUSED.has(context.code) ? "token_refused" : "disconnected", `${context.code} ${context.reason}`);
    });
    return connection;
  }

  private listen(connection: Connection, entry: Entry): void {
    const { subscription, listener } = entry;
    subscription.on("publication", (context) => {
      this.options.onPublication?.();
      listener.publication(context.data, context.offset);
    });
    subscription.on("subscribed", (context) => {
      // Every subscribe recovers (from `since` at first, then from the last offset): one that did
      // not means what was published meanwhile is lost to the channel.
      if (!(context.wasRecovering && context.recovered)) {
        this.failEntry(connection, entry, "unrecoverable", "the stream position could not be recovered");
        return;
      }
      listener.subscribed();
    });
    subscription.on("subscribing", (context) => {
      if (context.code !== 0) listener.interrupted();
    });
    subscription.on("unsubscribed", (context) => {
      if (context.code === 0) return; // our own unsubscribe()
      this.failEntry(connection, entry, "subscribe_refused", `${context.code} ${context.reason}`);
    });
  }

  /** Gives up every subscription of a connection, and the connection. */
  private fail(connection: Connection, reason: FallbackReason, detail: string): void {
    if (connection.closed) return;
    this.report(reason, connection.origin, detail, "warn");
    for (const entry of [...connection.entries.values()]) {
      this.remove(connection, entry);
      entry.listener.failed(reason);
    }
    this.releaseIfUnused(connection);
  }

  private failEntry(connection: Connection, entry: Entry, reason: FallbackReason, detail: string): void {
    if (connection.entries.get(entry.channel.channel) !== entry) return;
    this.report(reason, connection.origin, detail, "warn");
    this.remove(connection, entry);
    entry.listener.failed(reason);
  }

  private remove(connection: Connection, entry: Entry): void {
    if (connection.entries.get(entry.channel.channel) !== entry) return;
    connection.entries.delete(entry.channel.channel);
    this.subscriptions -= 1;
    entry.subscription.removeAllListeners();
    entry.subscription.unsubscribe();
    connection.client.removeSubscription(entry.subscription);
    this.releaseIfUnused(connection);
  }

  private releaseIfUnused(connection: Connection): void {
    if (connection.entries.size > 0 || connection.closed) return;
    connection.closed = true;
    if (this.connections.get(connection.key) === connection) this.connections.delete(connection.key);
    connection.client.removeAllListeners();
    connection.client.disconnect();
  }

  /** Counts a fallback and logs it: once at `level` per reason and origin, at debug after that. */
  private report(reason: FallbackReason, origin: string, detail: string, level: "info" | "warn" | "debug"): void {
    this.options.onFallback?.(reason);
    const key = `${reason}\u0000${origin}`;
    const first = !this.logged.has(key) && this.logged.size < 1000;
    if (first) this.logged.add(key);
    const message =
      reason === "host_not_allowed"
        ? "realtime channel not followed: its host is not allowed (set REALTIME_ALLOWED_HOSTS); polling instead"
        : "realtime channel given up; polling instead";
    this.options.logger[first ? level : "debug"]({ reason, endpoint: origin, detail }, message);
  }
}
