import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { PollSharing, SharedGroup } from "../upstream/poll-sharing.js";
import { type UpstreamQuery, upstreamQuerySchema } from "../upstream/query-schemas.js";
import { openRedis } from "./redis-connection.js";

/** What the cluster's poll sharing reports, for metrics. */
export interface PollSharingEvents {
  onLease?: (change: "acquired" | "lost" | "released") => void;
  onPublished?: (items: number) => void;
  onReceived?: (items: number) => void;
  onFallback?: (reason: "redis" | "silent_holder") => void;
}

/** Settings of the poll sharing. */
export interface RedisPollSharingOptions {
  url: string;
  prefix: string;
  /** How long a lease lasts without renewal: a dead holder is replaced within about this long. */
  leaseMs: number;
  logger: Logger;
  now?: () => number;
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
 * (customer text: never stored, only sent to the replicas listening). Credentials never enter
 * Redis: groups are named by a hash of the credential. Every command fails fast (`openRedis`); a
 * failure means this replica polls alone for that turn (logged once, counted), and it rejoins the
 * sharing as soon as Redis answers again.
 */
export class RedisPollSharing implements PollSharing {
  private readonly redis: Redis;
  private readonly subscriber: Redis;
  private readonly replica = randomUUID();
  private readonly groups = new Map<string, RedisSharedGroup>();
  private degraded = false;

  constructor(private readonly options: RedisPollSharingOptions) {
    this.redis = openRedis(options.url);
    this.subscriber = openRedis(options.url);
    this.subscriber.on("message", (channel: string, text: string) => this.receive(channel, text));
  }

  join(group: string, onShared: (items: UpstreamQuery[], pollTraceparent?: string) => void, onHandover: () => void): SharedGroup {
    const shared = new RedisSharedGroup(this, group, onShared, onHandover);
    this.groups.set(this.channelOf(group), shared);
    this.subscriber.subscribe(this.channelOf(group)).catch(() => this.fellBack("redis"));
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
    this.subscriber.disconnect();
    this.redis.disconnect();
  }

  /** @internal Redis, its key names, and the replica's identity, for the groups. */
  get context() {
    return { redis: this.redis, replica: this.replica, options: this.options, now: this.options.now ?? Date.now };
  }

  channelOf(group: string): string {
    return `${this.options.prefix}poll:${group}`;
  }

  /** @internal A group leaves: stop listening to it. */
  forgetGroup(group: string): void {
    this.groups.delete(this.channelOf(group));
    this.subscriber.unsubscribe(this.channelOf(group)).catch(() => undefined);
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
    const { prefix } = this.sharing.context.options;
    return { lease: `${prefix}lease:${this.group}`, waiting: `${prefix}waiting:${this.group}` };
  }

  async turn(ownIds: readonly string[]): Promise<{ poll: boolean; othersWaitFor: string[] }> {
    const { redis, replica, options, now } = this.sharing.context;
    const { lease, waiting } = this.keys;
    const at = now();
    try {
      const expiry = at + 3 * options.leaseMs;
      const batch = redis.multi();
      if (ownIds.length > 0) batch.zadd(waiting, ...ownIds.flatMap((id) => [String(expiry), id]));
      batch.pexpire(waiting, 3 * options.leaseMs).set(lease, replica, "PX", options.leaseMs, "NX").get(lease);
      const results = (await batch.exec()) ?? [];
      const failed = results.find(([error]) => error);
      if (failed) throw failed[0];
      const holder = results.at(-1)?.[1] as string | null;
      this.sharing.recovered();
      if (holder === replica) {
        if (!this.holding) this.sharing.context.options.events?.onLease?.("acquired");
        this.holding = true;
        await redis.eval(RENEW, 1, lease, replica, String(options.leaseMs));
        await redis.zremrangebyscore(waiting, "-inf", String(at));
        const all = await redis.zrange(waiting, "0", "-1");
        const mine = new Set(ownIds);
        return { poll: true, othersWaitFor: all.filter((id) => !mine.has(id)) };
      }
      if (this.holding) this.sharing.context.options.events?.onLease?.("lost");
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

  share(items: UpstreamQuery[], trace?: string): void {
    if (!this.holding) return;
    const { redis, replica, options } = this.sharing.context;
    redis
      .publish(this.sharing.channelOf(this.group), JSON.stringify({ from: replica, items, trace } satisfies Message))
      .then(() => options.events?.onPublished?.(items.length), () => this.sharing.fellBack("redis"));
  }

  forget(id: string): void {
    this.sharing.context.redis.zrem(this.keys.waiting, id).catch(() => undefined);
  }

  leave(): void {
    if (this.left) return;
    this.left = true;
    this.sharing.forgetGroup(this.group);
    if (!this.holding) return;
    this.holding = false;
    const { redis, replica, options } = this.sharing.context;
    options.events?.onLease?.("released");
    // Hand over: free the lease, and tell the others to take it now rather than when it expires.
    redis
      .eval(RELEASE, 1, this.keys.lease, replica)
      .then(() => {
        const handover: Message = { from: replica, handover: true };
        return redis.publish(this.sharing.channelOf(this.group), JSON.stringify(handover));
      })
      .catch(() => undefined);
  }

  /** @internal What another replica published. */
  heard(message: Message): void {
    const { options, now } = this.sharing.context;
    if (message.handover) {
      this.lastHeard = 0;
      this.onHandover();
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
