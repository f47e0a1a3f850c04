import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { PollSharing, SharedGroup } from "../upstream/poll-sharing.js";
import type { UpstreamQuery } from "../upstream/query-schemas.js";
import type { Clock } from "../util/clock.js";
import { parseJsonText } from "../util/parse-json.js";
import type { OpenSubscriber } from "./channel-subscriber.js";
import type { RedisKeys } from "./keys.js";
import { RedisChannels } from "./redis-channels.js";
import type { RedisGate } from "./redis-gate.js";
import { type FallbackReason, type GroupContext, type GroupKeys, RedisSharedGroup, sharedMessageSchema } from "./redis-shared-group.js";

/** What the cluster's poll sharing reports, for metrics. */
export interface PollSharingEvents {
  onLease?: (change: "acquired" | "lost" | "released") => void;
  onPublished?: (items: number) => void;
  onReceived?: (items: number) => void;
  onFallback?: (reason: FallbackReason) => void;
}

/** Settings of the poll sharing. */
export interface RedisPollSharingOptions {
  /** The adapter's command connection. */
  redis: RedisGate;
  /** Opens where the channels' subscriptions are held (a subscribed connection runs no other commands); closed with the sharing. */
  subscriber: OpenSubscriber;
  /** The deployment's key names (its `REDIS_KEY_PREFIX`). */
  keys: RedisKeys;
  /** How long a lease lasts without renewal: a dead holder is replaced within about this long. */
  leaseMs: number;
  logger: Logger;
  /** Timers (a subscription tried again, a turn's wait) and the time (the lease, a silent holder). */
  clock: Pick<Clock, "setTimeout" | "clearTimeout" | "now">;
  /** How long a turn waits for Redis before this replica polls alone (default `LEASE_WAIT_MS`). */
  leaseWaitMs?: number;
  events?: PollSharingEvents;
}

/**
 * How long a poll waits for its turn's answer from Redis, which a healthy Redis gives in about a
 * millisecond: past it the replica polls alone rather than hold its answers. In a cluster master's
 * failover they waited a whole command bound (`REDIS_COMMAND_TIMEOUT_MS`), twice, until the gate
 * knew the master down (docs/scale-out.md#in-a-failover); now one poll interval's worth at most.
 */
export const LEASE_WAIT_MS = 100;

/**
 * Poll sharing over Redis. Per group: a lease key (`SET NX PX`, renewed at each of the holder's
 * polls, released on hand-over), a sorted set of the ids each replica waits for (scored by expiry,
 * refreshed at each turn), and a pub/sub channel on which the holder publishes what it found
 * (customer text: never stored, only sent to the replicas listening). The three share one hash tag,
 * the group, so that in a cluster they live in one slot (docs/architecture/redis.md#redis-topologies).
 * Credentials never enter Redis: groups are named by a hash of the credential. The holder's work
 * is safe to repeat: after a failover that lost the lease, two holders for a moment list and
 * publish the same snapshots, which waiters take once. A group whose subscription was lost (a
 * connection broke, its slot moved) reads again at once what it may have missed when Redis takes it
 * again. Every command goes through the gate (skipped at once while Redis is down); a failure, or
 * an answer that does not come at once (`LEASE_WAIT_MS`), means this replica polls alone for that
 * turn (a failure logged once; both counted), and it rejoins the sharing as soon as Redis answers again.
 */
export class RedisPollSharing implements PollSharing {
  private readonly channels: RedisChannels;
  private readonly replica = randomUUID();
  private readonly groups = new Map<string, RedisSharedGroup>();
  /** Channels whose last message did not parse (logged once until one does). */
  private readonly unreadable = new Set<string>();
  private degraded = false;
  /** What every group uses of the sharing. */
  private readonly context: GroupContext;

  constructor(private readonly options: RedisPollSharingOptions) {
    this.channels = new RedisChannels(options.redis, options.subscriber, options.clock, {
      message: (channel, text) => this.receive(channel, text),
      resubscribed: (channel) => this.groups.get(channel)?.readAgain(),
      subscribeFailed: () => this.fellBack("redis"),
    });
    const { events } = options;
    this.context = {
      redis: options.redis,
      channels: this.channels,
      replica: this.replica,
      leaseMs: options.leaseMs,
      leaseWaitMs: options.leaseWaitMs ?? LEASE_WAIT_MS,
      clock: options.clock,
      onLease: events?.onLease,
      onPublished: events?.onPublished,
      onReceived: events?.onReceived,
      recovered: () => this.recovered(),
      fellBack: (reason) => this.fellBack(reason),
      forget: (group) => this.forgetGroup(group),
    };
  }

  join(group: string, onShared: (items: UpstreamQuery[], pollTraceparent?: string) => void, onHandover: () => void): SharedGroup {
    const shared = new RedisSharedGroup(this.context, group, this.keysOf(group), onShared, onHandover);
    this.groups.set(this.channelOf(group), shared);
    this.channels.subscribe(this.channelOf(group));
    return shared;
  }

  /** Groups whose lease this replica holds now. */
  get leasesHeld(): number {
    let count = 0;
    for (const group of this.groups.values()) if (group.isHolding) count += 1;
    return count;
  }

  async close(): Promise<void> {
    for (const group of this.groups.values()) group.leave();
    this.channels.close();
  }

  /** The group's keys and channel, under one hash tag (the group): one slot in a cluster. */
  private keysOf(group: string): GroupKeys {
    const { keys } = this.options;
    return { lease: keys.pollLease(group), waiting: keys.pollWaiting(group), channel: keys.pollChannel(group) };
  }

  private channelOf(group: string): string {
    return this.keysOf(group).channel;
  }

  /** A group leaves: stop listening to it. */
  private forgetGroup(group: string): void {
    this.groups.delete(this.channelOf(group));
    this.unreadable.delete(this.channelOf(group));
    this.channels.unsubscribe(this.channelOf(group));
  }

  /** A turn reached Redis again after failing: say so once. */
  private recovered(): void {
    if (!this.degraded) return;
    this.degraded = false;
    this.options.logger.info("Redis answers again: polling is shared between replicas again");
  }

  /** Polling alone for a turn: counted each time; logged when Redis starts failing. */
  private fellBack(reason: FallbackReason): void {
    this.options.events?.onFallback?.(reason);
    if (reason === "redis" && !this.degraded) {
      this.degraded = true;
      this.options.logger.warn("Redis does not answer: each replica polls on its own until it does");
    }
  }

  /** A message on a group's channel: from another replica, parsed; one that does not parse is ignored (and logged). */
  private receive(channel: string, text: string): void {
    const group = this.groups.get(channel);
    if (!group) return;
    const message = parseJsonText(sharedMessageSchema, text);
    if (message === undefined) {
      // Once per channel until one parses again: a replica of another version would otherwise log every poll.
      if (!this.unreadable.has(channel)) this.options.logger.warn({ channel }, "a message on the poll sharing channel does not parse: ignored");
      this.unreadable.add(channel);
      return;
    }
    this.unreadable.delete(channel);
    if (message.from === this.replica) return;
    group.heard(message);
  }
}
