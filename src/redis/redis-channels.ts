import { Cluster } from "ioredis";
import type { Clock } from "../util/clock.js";
import type { RedisClient } from "./redis-connection.js";
import type { RedisGate } from "./redis-gate.js";

/** Which pub/sub the channels use: classic (`PUBLISH`, broadcast to every node of a cluster) or sharded (`SPUBLISH`, to the one shard of the channel's slot). */
export type PubSubMode = "classic" | "sharded";

/** What the channels hand on. */
export interface RedisChannelsEvents {
  message: (channel: string, text: string) => void;
  /** The subscriber connection came back after a break: what was published meanwhile is lost, read it again. */
  resubscribed: () => void;
  /** A subscription could not be made now (it is tried again until it is, or no longer wanted). */
  subscribeFailed: () => void;
}

/** How soon a subscription that failed is tried again. */
const RESUBSCRIBE_MS = 500;

/**
 * The poll sharing's pub/sub (docs/architecture.md#redis-topologies), classic or sharded behind one
 * small interface. A cluster uses sharded pub/sub when its servers have it (Redis 7+): a classic
 * message is broadcast over the cluster bus to every node, a sharded one reaches only the shard
 * that owns the channel's slot (measured: docs/architecture.md#redis-topologies). One node or a Sentinel
 * set-up uses classic pub/sub, where the two are the same. Publishing goes through the gate like
 * every command. The subscriber is a connection of its own; the channels wanted are kept here and
 * subscribed until Redis takes them — a subscription asked for while Redis is away (down, failing
 * over) is tried again, not lost — and after a reconnection `resubscribed` tells the sharing to read
 * again what it may have missed.
 */
export class RedisChannels {
  private mode: Promise<PubSubMode> | undefined;
  private connected = false;
  private closed = false;
  private readonly wanted = new Set<string>();

  constructor(
    private readonly gate: RedisGate,
    private readonly subscriber: RedisClient,
    private readonly clock: Pick<Clock, "setTimeout">,
    private readonly events: RedisChannelsEvents,
  ) {
    for (const kind of ["message", "smessage"]) subscriber.on(kind, (channel: string, text: string) => events.message(channel, text));
    // A cluster re-subscribes its sharded subscribers itself after each topology change.
    const again = subscriber instanceof Cluster ? "subscribersReady" : "ready";
    subscriber.on(again, () => {
      if (!this.connected) {
        this.connected = true;
        return;
      }
      if (!(subscriber instanceof Cluster)) for (const channel of this.wanted) this.trySubscribe(channel);
      events.resubscribed();
    });
    if (subscriber instanceof Cluster) subscriber.once("ready", () => (this.connected = true));
  }

  /** Classic or sharded, decided once: sharded only in a cluster whose servers know `SPUBLISH`. */
  pubSubMode(): Promise<PubSubMode> {
    this.mode ??= this.subscriber instanceof Cluster
      ? this.gate
        .run(null, (redis) => redis.call("COMMAND", "INFO", "SPUBLISH"))
        .then((info) => (Array.isArray(info) && info[0] ? "sharded" : "classic"), () => "classic")
      : Promise.resolve("classic");
    return this.mode;
  }

  /** Listens to `channel` from now on (tried again until Redis takes it). */
  subscribe(channel: string): void {
    this.wanted.add(channel);
    this.trySubscribe(channel);
  }

  unsubscribe(channel: string): void {
    this.wanted.delete(channel);
    void this.pubSubMode()
      .then((mode) => (mode === "sharded" ? (this.subscriber as Cluster).sunsubscribe(channel) : this.subscriber.unsubscribe(channel)))
      .catch(() => undefined);
  }

  async publish(channel: string, text: string): Promise<void> {
    const sharded = (await this.pubSubMode()) === "sharded";
    // A sharded message goes to its channel's slot; a classic one to any node.
    if (sharded) await this.gate.run(channel, (redis) => redis.spublish(channel, text));
    else await this.gate.run(null, (redis) => redis.publish(channel, text));
  }

  close(): void {
    this.closed = true;
    this.wanted.clear();
    this.subscriber.disconnect();
  }

  private trySubscribe(channel: string): void {
    void this.pubSubMode()
      .then((mode) => (mode === "sharded" ? (this.subscriber as Cluster).ssubscribe(channel) : this.subscriber.subscribe(channel)))
      .catch(() => {
        if (this.closed || !this.wanted.has(channel)) return;
        this.events.subscribeFailed();
        this.clock.setTimeout(() => {
          if (!this.closed && this.wanted.has(channel)) this.trySubscribe(channel);
        }, RESUBSCRIBE_MS);
      });
  }
}
