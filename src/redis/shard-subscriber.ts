import type { Redis } from "ioredis";
import {
  type ChannelSubscriber,
  forwardMessages,
  type PubSubConnection,
  type PubSubMode,
  type SubscriberEvents,
  subscribeOn,
  unsubscribeOn,
} from "./channel-subscriber.js";
import type { SlotMap } from "./cluster-view.js";
import { slotMaster } from "./key-slot.js";

/** What the shard subscriber uses of a connection to one node (ioredis's `Redis`). */
export type NodeConnection = PubSubConnection & Pick<Redis, "disconnect">;

/** Settings of the shard subscriber. */
export interface ShardSubscriberOptions {
  /** The command client's slot map: where each channel is subscribed. */
  map: SlotMap;
  /**
   * Opens a connection to one node (`host:port`). It queues commands until it is ready, and never
   * reconnects: once it has ended (`end`), its channels are placed again by the map.
   */
  connect: (node: string) => NodeConnection;
  events: SubscriberEvents;
}

/** One node's connection, the channels Redis took on it, and the subscriptions still under way. */
interface Shard {
  connection: NodeConnection;
  channels: Set<string>;
  pending: number;
}

/**
 * Sharded pub/sub in a Redis Cluster on plain connections (docs/architecture/redis.md#redis-topologies):
 * each channel is subscribed on the master that owns its slot in the command client's slot map, one
 * connection per master that has a channel wanted. ioredis's own sharded-subscriber client was a
 * second cluster client with its own slot map, learnt again at every topology change and compared
 * whole, as JSON, with the last: in a master's failover that was most of a 120-140 ms stretch in
 * which a replica's event loop served nothing (docs/scale-out.md#in-a-failover). Here nothing is
 * learnt twice. A connection that ends (its master died) drops its channels, which are listened to
 * again where the map says (a dead master fails at once, and is tried again until its replica owns
 * the slot); a new map that moves a channel's slot moves the channel; a node that says a channel
 * moved (`MOVED`, or Redis's own `sunsubscribe` when a slot migrates) has the map learnt again.
 */
export class ShardSubscriber implements ChannelSubscriber {
  private readonly shards = new Map<string, Shard>();
  /** Each channel Redis took, and the node it took it on. */
  private readonly placed = new Map<string, { node: string; mode: PubSubMode }>();
  private readonly onRefresh = () => this.follow();
  private closed = false;

  constructor(private readonly options: ShardSubscriberOptions) {
    options.map.on("refresh", this.onRefresh);
  }

  async listen(channel: string, mode: PubSubMode): Promise<unknown> {
    if (this.closed) throw new Error("the subscriber is closed");
    const node = this.ownerOf(channel);
    if (node === undefined) {
      this.options.map.refreshSlotsCache();
      throw new Error("no master is known for the channel's slot yet");
    }
    const previous = this.placed.get(channel);
    if (previous) {
      if (previous.node === node) return;
      this.drop(channel, previous.node, mode);
    }
    const shard = this.shardOf(node);
    shard.pending += 1;
    let taken = false;
    try {
      await subscribeOn(shard.connection, channel, mode);
      // Taken on a connection that has ended since, or by a node whose slot a new map gave to
      // another: that subscription hears nothing; the caller tries again.
      taken = this.shards.get(node) === shard && this.ownerOf(channel) === node;
    } finally {
      shard.pending -= 1;
      if (!taken) this.closeIfIdle(node, shard);
    }
    if (!taken) throw new Error("the channel's node changed while it was subscribed");
    shard.channels.add(channel);
    this.placed.set(channel, { node, mode });
    return undefined;
  }

  stop(channel: string, mode: PubSubMode): void {
    const place = this.placed.get(channel);
    if (place) this.drop(channel, place.node, mode);
  }

  close(): void {
    this.closed = true;
    this.options.map.off("refresh", this.onRefresh);
    for (const shard of this.shards.values()) shard.connection.disconnect();
    this.shards.clear();
    this.placed.clear();
  }

  /** The master of the channel's slot, as the command client last learnt it. */
  private ownerOf(channel: string): string | undefined {
    return slotMaster(this.options.map.slots, channel);
  }

  /** The node's connection: the one open, or a new one. */
  private shardOf(node: string): Shard {
    const open = this.shards.get(node);
    if (open) return open;
    const connection = this.options.connect(node);
    const shard: Shard = { connection, channels: new Set(), pending: 0 };
    this.shards.set(node, shard);
    const { events, map } = this.options;
    forwardMessages(connection, events);
    // The node says a channel's slot is another's now: learn the map again, which moves the channel.
    connection.on("moved", () => map.refreshSlotsCache());
    connection.on("end", () => this.ended(node, shard));
    return shard;
  }

  /** A node's connection ended (its master died, or the network failed): its channels are listened to again where the map says. */
  private ended(node: string, shard: Shard): void {
    if (this.shards.get(node) !== shard) return;
    this.shards.delete(node);
    const lost = [...shard.channels];
    for (const channel of lost) this.placed.delete(channel);
    if (this.closed) return;
    // A master that died is replaced by its replica: learn who owns its slots now.
    this.options.map.refreshSlotsCache();
    if (lost.length > 0) this.options.events.lost(lost);
  }

  /** A new slot map: the channels whose slot another master owns now move there. */
  private follow(): void {
    const moved: string[] = [];
    for (const [channel, place] of this.placed) {
      if (this.ownerOf(channel) === place.node) continue;
      this.drop(channel, place.node, place.mode);
      moved.push(channel);
    }
    if (moved.length > 0 && !this.closed) this.options.events.lost(moved);
  }

  /** Forgets a channel's subscription on `node`, and tells the node when its connection is still up. */
  private drop(channel: string, node: string, mode: PubSubMode): void {
    this.placed.delete(channel);
    const shard = this.shards.get(node);
    if (!shard) return;
    shard.channels.delete(channel);
    if (this.closeIfIdle(node, shard)) return;
    unsubscribeOn(shard.connection, channel, mode);
  }

  /** Closes a node's connection once it holds no channel and no subscription is under way on it. */
  private closeIfIdle(node: string, shard: Shard): boolean {
    if (shard.channels.size > 0 || shard.pending > 0) return false;
    if (this.shards.get(node) === shard) this.shards.delete(node);
    shard.connection.disconnect();
    return true;
  }
}
