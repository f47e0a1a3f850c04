import { Cluster } from "ioredis";
import type { Clock } from "../util/clock.js";
import type { ChannelSubscriber, OpenSubscriber, PubSubMode } from "./channel-subscriber.js";
import type { RedisGate } from "./redis-gate.js";

/** What the channels hand on. */
export interface RedisChannelsEvents {
  message: (channel: string, text: string) => void;
  /** Redis took `channel` again after its subscription was lost: what was published meanwhile is lost, read it again. */
  resubscribed: (channel: string) => void;
  /** A subscription could not be made now (it is tried again until it is, or no longer wanted). */
  subscribeFailed: () => void;
}

/** How soon a subscription that failed is tried again. */
const RESUBSCRIBE_MS = 500;

/**
 * The poll sharing's pub/sub (docs/architecture/redis.md#redis-topologies), classic or sharded behind one
 * small interface. A cluster uses sharded pub/sub when its servers have it (Redis 7+): a classic
 * message is broadcast over the cluster bus to every node, a sharded one reaches only the shard
 * that owns the channel's slot (measured: docs/architecture/redis.md#redis-topologies). One node or a Sentinel
 * set-up uses classic pub/sub, where the two are the same. Publishing goes through the gate like
 * every command; subscriptions are held by a `ChannelSubscriber` (a connection of its own, or one
 * per cluster master). The channels wanted are kept here and subscribed until Redis takes them — a
 * subscription asked for while Redis is away (down, failing over) is tried again, not lost — and
 * once a lost subscription is taken again, `resubscribed` tells the sharing to read again what it
 * may have missed.
 */
export class RedisChannels {
  private mode: Promise<PubSubMode> | undefined;
  private closed = false;
  private readonly wanted = new Set<string>();
  private readonly subscriber: ChannelSubscriber;

  constructor(
    private readonly gate: RedisGate,
    openSubscriber: OpenSubscriber,
    private readonly clock: Pick<Clock, "setTimeout">,
    private readonly events: RedisChannelsEvents,
  ) {
    this.subscriber = openSubscriber({
      message: (channel, text) => events.message(channel, text),
      lost: (channels) => {
        for (const channel of channels ?? [...this.wanted]) if (this.wanted.has(channel)) this.trySubscribe(channel, true);
      },
    });
  }

  /**
   * Classic or sharded, decided once Redis has said: sharded only in a cluster whose servers know
   * `SPUBLISH`. While Redis does not answer it is not decided (the caller fails, and tries again):
   * a replica that guessed would publish where the others do not listen.
   */
  pubSubMode(): Promise<PubSubMode> {
    this.mode ??= this.gate.redis instanceof Cluster
      ? this.gate
        .run(null, (redis) => redis.call("COMMAND", "INFO", "SPUBLISH"))
        .then(
          (info) => (Array.isArray(info) && info[0] ? "sharded" : "classic"),
          (error: unknown) => {
            this.mode = undefined;
            throw error;
          },
        )
      : Promise.resolve("classic");
    return this.mode;
  }

  /** Listens to `channel` from now on (tried again until Redis takes it). */
  subscribe(channel: string): void {
    this.wanted.add(channel);
    this.trySubscribe(channel, false);
  }

  unsubscribe(channel: string): void {
    this.wanted.delete(channel);
    // Without a mode decided nothing was subscribed.
    this.pubSubMode().then((mode) => this.subscriber.stop(channel, mode), () => undefined);
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
    this.subscriber.close();
  }

  /** Subscribes, and tries again until Redis takes it; `lost`: it was dropped, so its taking again is told. */
  private trySubscribe(channel: string, lost: boolean): void {
    this.pubSubMode()
      .then(async (mode) => {
        await this.subscriber.listen(channel, mode);
        return mode;
      })
      .then(
        (mode) => {
          // No longer wanted while Redis took it: let it go again.
          if (!this.wanted.has(channel)) this.subscriber.stop(channel, mode);
          else if (lost) this.events.resubscribed(channel);
        },
        () => {
          if (this.closed || !this.wanted.has(channel)) return;
          this.events.subscribeFailed();
          this.clock.setTimeout(() => {
            if (!this.closed && this.wanted.has(channel)) this.trySubscribe(channel, lost);
          }, RESUBSCRIBE_MS);
        },
      );
  }
}
