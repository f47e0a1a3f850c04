import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { PollSharing, SharedGroup } from "../upstream/poll-sharing.js";
import { type UpstreamQuery, upstreamQuerySchema } from "../upstream/query-schemas.js";
import type { Clock } from "../util/clock.js";
import type { RedisKeys } from "./keys.js";
import { RedisChannels } from "./redis-channels.js";
import type { OpenSubscriber } from "./channel-subscriber.js";
import { execOrThrow } from "./redis-connection.js";
import type { RedisGate } from "./redis-gate.js";

/** What the cluster's poll sharing reports, for metrics. */
export interface PollSharingEvents {
  onLease?: (change: "acquired" | "lost" | "released") => void;
  onPublished?: (items: number) => void;
  onReceived?: (items: number) => void;
  onFallback?: (reason: "redis" | "silent_holder") => void;
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
  /** Timers (a subscription tried again) and the time (the lease, a silent holder). */
  clock: Pick<Clock, "setTimeout" | "now">;
  events?: PollSharingEvents;
}

// Renews the lease only while it is still ours; releases it only while it is still ours.
const RENEW = "if redis.call(\"get\", KEYS[1]) == ARGV[1] then return redis.call(\"pexpire\", KEYS[1], ARGV[2]) else return 0 end";
const RELEASE = "if redis.call(\"get\", KEYS[1]) == ARGV[1] then return redis.call(\"del\", KEYS[1]) else return 0 end";

interface Message {
  from: string;
  items?: unknown[];
  handover?: boolean;
  /** The W3C `traceparent` of the poll that found `items`, when the holder traces. */
  trace?: string;
}

/**
 * Poll sharing over Redis. Per group: a lease key (`SET NX PX`, renewed at each of the holder's
 * polls, released on hand-over), a sorted set of the ids each replica waits for (scored by expiry,
 * refreshed at each turn), and a pub/sub channel on which the holder publishes what it found
 * (customer text: never stored, only sent to the replicas listening). The three share one hash tag,
 * the group, so that in a cluster they live in one slot (docs/architecture.md#redis-topologies).
 * Credentials never enter Redis: groups are named by a hash of the credential. The holder's work
 * is safe to repeat: after a failover that lost the lease, two holders for a moment list and
 * publish the same snapshots, which waiters take once. A group whose subscription was lost (a
 * connection broke, its slot moved) reads again at once what it may have missed when Redis takes it
 * again. Every command goes through the gate (skipped at once while Redis is down); a failure means
 * this replica polls alone for that turn (logged once, counted), and it rejoins the sharing as soon
 * as Redis answers again.
 */
export class RedisPollSharing implements PollSharing {
  private readonly redis: RedisGate;
  private readonly channels: RedisChannels;
  private readonly replica = randomUUID();
  private readonly groups = new Map<string, RedisSharedGroup>();
  private degraded = false;

  constructor(private readonly options: RedisPollSharingOptions) {
    this.redis = options.redis;
    this.channels = new RedisChannels(options.redis, options.subscriber, options.clock, {
      message: (channel, text) => this.receive(channel, text),
      resubscribed: (channel) => this.groups.get(channel)?.readAgain(),
      subscribeFailed: () => this.fellBack("redis"),
    });
  }

  join(group: string, onShared: (items: UpstreamQuery[], pollTraceparent?: string) => void, onHandover: () => void): SharedGroup {
    const shared = new RedisSharedGroup(this, group, onShared, onHandover);
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

  /** @internal Redis, its key names, and the replica's identity, for the groups. */
  get context() {
    const { redis, channels, replica, options } = this;
    return { redis, channels, replica, options, now: () => options.clock.now() };
  }

  /** The group's keys and channel, under one hash tag (the group): one slot in a cluster. */
  keysOf(group: string) {
    const { keys } = this.options;
    return { lease: keys.pollLease(group), waiting: keys.pollWaiting(group), channel: keys.pollChannel(group) };
  }

  channelOf(group: string): string {
    return this.keysOf(group).channel;
  }

  /** @internal A group leaves: stop listening to it. */
  forgetGroup(group: string): void {
    this.groups.delete(this.channelOf(group));
    this.channels.unsubscribe(this.channelOf(group));
  }

  /** @internal A turn reached Redis again after failing: say so once. */
  recovered(): void {
    if (!this.degraded) return;
    this.degraded = false;
    this.options.logger.info("Redis answers again: polling is shared between replicas again");
  }

  /** @internal Polling alone for a turn: counted each time, logged when it starts. */
  fellBack(reason: "redis" | "silent_holder"): void {
    this.options.events?.onFallback?.(reason);
    if (reason === "redis" && !this.degraded) {
      this.degraded = true;
      this.options.logger.warn("Redis does not answer: each replica polls on its own until it does");
    }
  }

  private receive(channel: string, text: string): void {
    const group = this.groups.get(channel);
    if (!group) return;
    let message: Message;
    try {
      message = JSON.parse(text) as Message;
    } catch {
      return;
    }
    if (message.from === this.replica) return;
    group.heard(message);
  }
}

/** One group's lease, waited ids and channel, from this replica's side. */
class RedisSharedGroup implements SharedGroup {
  private holding = false;
  /** When the holder was last heard from (a publication): a silent holder is a dead one. */
  private lastHeard: number;
  private left = false;

  constructor(
    private readonly sharing: RedisPollSharing,
    private readonly group: string,
    private readonly onShared: (items: UpstreamQuery[], pollTraceparent?: string) => void,
    private readonly onHandover: () => void,
  ) {
    this.lastHeard = sharing.context.now();
  }

  get isHolding(): boolean {
    return this.holding;
  }

  private get keys() {
    return this.sharing.keysOf(this.group);
  }

  async turn(ownIds: readonly string[]): Promise<{ poll: boolean; othersWaitFor: string[] }> {
    const { redis, replica, options, now } = this.sharing.context;
    const { lease, waiting } = this.keys;
    const at = now();
    try {
      const { holder, others } = await redis.run(lease, async (connection) => {
        const expiry = at + 3 * options.leaseMs;
        const batch = connection.multi();
        if (ownIds.length > 0) batch.zadd(waiting, ...ownIds.flatMap((id) => [String(expiry), id]));
        batch.pexpire(waiting, 3 * options.leaseMs).set(lease, replica, "PX", options.leaseMs, "NX").get(lease);
        const results = await execOrThrow(batch);
        const holder = results.at(-1)?.[1] as string | null;
        if (holder !== replica) return { holder, others: [] };
        await connection.eval(RENEW, 1, lease, replica, String(options.leaseMs));
        await connection.zremrangebyscore(waiting, "-inf", String(at));
        const mine = new Set(ownIds);
        return { holder, others: (await connection.zrange(waiting, "0", "-1")).filter((id) => !mine.has(id)) };
      });
      this.sharing.recovered();
      if (holder === replica) {
        if (!this.holding) options.events?.onLease?.("acquired");
        this.holding = true;
        return { poll: true, othersWaitFor: others };
      }
      if (this.holding) options.events?.onLease?.("lost");
      this.holding = false;
      if (at - this.lastHeard > options.leaseMs) {
        this.sharing.fellBack("silent_holder");
        return { poll: true, othersWaitFor: [] };
      }
      return { poll: false, othersWaitFor: [] };
    } catch {
      this.sharing.fellBack("redis");
      return { poll: true, othersWaitFor: [] };
    }
  }

  share(items: UpstreamQuery[], trace: string | undefined): void {
    if (!this.holding) return;
    const { channels, replica, options } = this.sharing.context;
    const message = JSON.stringify({ from: replica, items, trace } satisfies Message);
    channels
      .publish(this.keys.channel, message)
      .then(() => options.events?.onPublished?.(items.length), () => this.sharing.fellBack("redis"));
  }

  forget(id: string): void {
    const { waiting } = this.keys;
    this.sharing.context.redis.run(waiting, (connection) => connection.zrem(waiting, id)).catch(() => undefined);
  }

  leave(): void {
    if (this.left) return;
    this.left = true;
    this.sharing.forgetGroup(this.group);
    if (!this.holding) return;
    this.holding = false;
    const { redis, channels, replica, options } = this.sharing.context;
    options.events?.onLease?.("released");
    // Hand over: free the lease, and tell the others to take it now rather than when it expires.
    const handover: Message = { from: replica, handover: true };
    redis
      .run(this.keys.lease, (connection) => connection.eval(RELEASE, 1, this.keys.lease, replica))
      .then(() => channels.publish(this.keys.channel, JSON.stringify(handover)))
      .catch(() => undefined);
  }

  /** @internal The holder handed over, or this replica may have missed what it published: poll now. */
  readAgain(): void {
    this.lastHeard = 0;
    this.onHandover();
  }

  /** @internal What another replica published. */
  heard(message: Message): void {
    const { options, now } = this.sharing.context;
    if (message.handover) {
      this.readAgain();
      return;
    }
    this.lastHeard = now();
    const items: UpstreamQuery[] = [];
    for (const item of message.items ?? []) {
      const parsed = upstreamQuerySchema.safeParse(item);
      if (parsed.success) items.push(parsed.data);
    }
    options.events?.onReceived?.(items.length);
    this.onShared(items, typeof message.trace === "string" ? message.trace : undefined);
  }
}
