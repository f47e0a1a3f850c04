import type { Redis } from "ioredis";

/** Which pub/sub the channels use: classic (`PUBLISH`, broadcast to every node of a cluster) or sharded (`SPUBLISH`, to the one shard of the channel's slot). */
export type PubSubMode = "classic" | "sharded";

/** What a subscriber hands on to the channels. */
export interface SubscriberEvents {
  message: (channel: string, text: string) => void;
  /**
   * Subscriptions were dropped (a connection broke, a channel's slot moved to another node): what
   * was published meanwhile is lost, and the channels named (all, when none are named) must be
   * listened to again.
   */
  lost: (channels?: readonly string[]) => void;
}

/**
 * Where the channels' subscriptions are held (docs/architecture/redis.md#redis-topologies): one
 * connection for a single Redis or a Sentinel-watched master (`ConnectionSubscriber`), one per
 * master of a cluster (`ShardSubscriber`). A subscribed connection runs no other command, so it is
 * never the command connection.
 */
export interface ChannelSubscriber {
  /** Listens to `channel` from now on; rejects when Redis did not take it now (the caller tries again). */
  listen(channel: string, mode: PubSubMode): Promise<unknown>;
  /** Stops listening to `channel` (nothing waits for Redis to confirm it). */
  stop(channel: string, mode: PubSubMode): void;
  close(): void;
}

/** What a subscriber uses of a connection for pub/sub (ioredis's `Redis`): both kinds of subscription, and their messages. */
export type PubSubConnection = Pick<Redis, "ssubscribe" | "sunsubscribe" | "subscribe" | "unsubscribe" | "on">;

/** Subscribes `connection` to `channel`, sharded (`SSUBSCRIBE`) or classic. */
export function subscribeOn(connection: PubSubConnection, channel: string, mode: PubSubMode): Promise<unknown> {
  return mode === "sharded" ? connection.ssubscribe(channel) : connection.subscribe(channel);
}

/** Unsubscribes `connection` from `channel` without waiting for Redis to confirm it. */
export function unsubscribeOn(connection: PubSubConnection, channel: string, mode: PubSubMode): void {
  (mode === "sharded" ? connection.sunsubscribe(channel) : connection.unsubscribe(channel)).catch(() => undefined);
}

/** Hands on every message `connection` hears, classic or sharded. */
export function forwardMessages(connection: PubSubConnection, events: Pick<SubscriberEvents, "message">): void {
  for (const kind of ["message", "smessage"]) connection.on(kind, (channel: string, text: string) => events.message(channel, text));
}

/** Builds a subscriber once its events are known (the channels' owner hands them in). */
export type OpenSubscriber = (events: SubscriberEvents) => ChannelSubscriber;

/**
 * The subscriber of one connection: a single Redis, or the master a set of sentinels names. ioredis
 * reconnects it by itself; after a reconnection every channel is listened to again.
 */
export class ConnectionSubscriber implements ChannelSubscriber {
  private connected = false;

  constructor(
    private readonly redis: Redis,
    events: SubscriberEvents,
  ) {
    forwardMessages(redis, events);
    redis.on("ready", () => {
      if (this.connected) events.lost();
      this.connected = true;
    });
  }

  listen(channel: string, mode: PubSubMode): Promise<unknown> {
    return subscribeOn(this.redis, channel, mode);
  }

  stop(channel: string, mode: PubSubMode): void {
    unsubscribeOn(this.redis, channel, mode);
  }

  close(): void {
    this.redis.disconnect();
  }
}
