import { z } from "zod";
import type { SharedGroup } from "../upstream/poll-sharing.js";
import { type UpstreamQuery, upstreamQuerySchema } from "../upstream/query-schemas.js";
import type { Clock } from "../util/clock.js";
import type { RedisChannels } from "./redis-channels.js";
import { execOrThrow } from "./redis-connection.js";
import type { RedisGate } from "./redis-gate.js";
import { RedisScript } from "./redis-script.js";

// Renews the lease only while it is still ours; releases it only while it is still ours.
const RENEW = new RedisScript("if redis.call(\"get\", KEYS[1]) == ARGV[1] then return redis.call(\"pexpire\", KEYS[1], ARGV[2]) else return 0 end");
const RELEASE = new RedisScript("if redis.call(\"get\", KEYS[1]) == ARGV[1] then return redis.call(\"del\", KEYS[1]) else return 0 end");

/**
 * What a replica publishes on a group's channel, as another replica reads it: parsed, never cast
 * (a replica of another version, or another hand on the channel, may send anything). Loose, so that
 * a field a later version adds does not make its messages unreadable; each item is parsed on its
 * own (`upstreamQuerySchema`), and a `trace` that is not text is only left out.
 */
export const sharedMessageSchema = z.looseObject({
  from: z.string(),
  items: z.array(z.unknown()).optional(),
  handover: z.boolean().optional(),
  /** The W3C `traceparent` of the poll that found `items`, when the holder traces. */
  trace: z.string().optional().catch(undefined),
});
/** What a replica publishes on a group's channel. */
export type SharedMessage = z.infer<typeof sharedMessageSchema>;

/** Why a replica polls alone for a turn: Redis failed, answered too late to wait for, or the holder is silent. */
export type FallbackReason = "redis" | "slow_redis" | "silent_holder";

/** What a group uses of the sharing it belongs to. */
export interface GroupContext {
  redis: Pick<RedisGate, "run">;
  channels: Pick<RedisChannels, "publish">;
  /** This replica's identity in the leases and messages. */
  replica: string;
  leaseMs: number;
  /** How long a turn waits for Redis's answer before the replica polls alone. */
  leaseWaitMs: number;
  clock: Pick<Clock, "setTimeout" | "clearTimeout" | "now">;
  onLease?: ((change: "acquired" | "lost" | "released") => void) | undefined;
  onPublished?: ((items: number) => void) | undefined;
  onReceived?: ((items: number) => void) | undefined;
  /** A turn reached Redis again after failing. */
  recovered(): void;
  /** This replica polls alone for a turn. */
  fellBack(reason: FallbackReason): void;
  /** The group leaves: stop listening to it. */
  forget(group: string): void;
}

/** The group's keys and channel, under one hash tag (the group): one slot in a cluster. */
export interface GroupKeys {
  lease: string;
  waiting: string;
  channel: string;
}

/** A turn's answer from Redis: whether this replica holds the lease, and the ids other replicas wait for. */
interface LeaseAnswer {
  holds: boolean;
  others: string[];
}

const POLL_ALONE = { poll: true, othersWaitFor: [] };

/**
 * One group's lease, waited ids and channel, from this replica's side (docs/upstream-assumptions.md#polling).
 * Sharing is an optimisation and never holds an answer: a turn waits for Redis at most
 * `leaseWaitMs`, then polls alone; Redis's late answer (or its failure, which the gate counts
 * toward the node's outage) still sets whether this replica holds the lease, and no second turn
 * is sent while one is unanswered.
 */
export class RedisSharedGroup implements SharedGroup {
  private holding = false;
  /** When the holder was last heard from (a publication): a silent holder is a dead one. */
  private lastHeard: number;
  private left = false;
  /** The turn sent to Redis and not answered yet. */
  private unanswered: Promise<LeaseAnswer | null> | undefined;

  constructor(
    private readonly context: GroupContext,
    private readonly group: string,
    private readonly keys: GroupKeys,
    private readonly onShared: (items: UpstreamQuery[], pollTraceparent?: string) => void,
    private readonly onHandover: () => void,
  ) {
    this.lastHeard = context.clock.now();
  }

  get isHolding(): boolean {
    return this.holding;
  }

  async turn(ownIds: readonly string[]): Promise<{ poll: boolean; othersWaitFor: string[] }> {
    const { context } = this;
    if (this.unanswered) {
      context.fellBack("slow_redis");
      return POLL_ALONE;
    }
    const at = context.clock.now();
    const sent = this.exchange(ownIds, at);
    this.unanswered = sent;
    const answer = await answeredWithin(sent, context.leaseWaitMs, context.clock);
    if (answer === TOO_LATE) {
      context.fellBack("slow_redis");
      return POLL_ALONE;
    }
    if (answer === null) {
      context.fellBack("redis");
      return POLL_ALONE;
    }
    if (answer.holds) return { poll: true, othersWaitFor: answer.others };
    if (at - this.lastHeard > context.leaseMs) {
      context.fellBack("silent_holder");
      return POLL_ALONE;
    }
    return { poll: false, othersWaitFor: [] };
  }

  /**
   * One turn with Redis: registers the ids this replica waits for, competes for the lease, and,
   * holding it, renews it and reads the ids the others wait for. Whenever Redis answers, what it
   * said about the lease is taken; null when it failed.
   */
  private async exchange(ownIds: readonly string[], at: number): Promise<LeaseAnswer | null> {
    const { redis, replica, leaseMs } = this.context;
    const { lease, waiting } = this.keys;
    try {
      const answer = await redis.run(lease, async (connection) => {
        const expiry = at + 3 * leaseMs;
        const batch = connection.multi();
        if (ownIds.length > 0) batch.zadd(waiting, ...ownIds.flatMap((id) => [String(expiry), id]));
        batch.pexpire(waiting, 3 * leaseMs).set(lease, replica, "PX", leaseMs, "NX").get(lease);
        const results = await execOrThrow(batch);
        if (results.at(-1)?.[1] !== replica) return { holds: false, others: [] };
        await RENEW.run(connection, [lease], [replica, String(leaseMs)]);
        await connection.zremrangebyscore(waiting, "-inf", String(at));
        const mine = new Set(ownIds);
        return { holds: true, others: (await connection.zrange(waiting, "0", "-1")).filter((id) => !mine.has(id)) };
      });
      this.context.recovered();
      this.hold(answer.holds);
      return answer;
    } catch {
      return null;
    } finally {
      this.unanswered = undefined;
    }
  }

  /** Takes what Redis said of the lease; a lease won after the group left is handed over at once. */
  private hold(holds: boolean): void {
    if (this.left) {
      if (holds) this.handOver();
      return;
    }
    if (holds && !this.holding) this.context.onLease?.("acquired");
    if (!holds && this.holding) this.context.onLease?.("lost");
    this.holding = holds;
  }

  share(items: UpstreamQuery[], trace: string | undefined): void {
    if (!this.holding) return;
    const { channels, replica, onPublished } = this.context;
    const message = JSON.stringify({ from: replica, items, trace } satisfies SharedMessage);
    channels.publish(this.keys.channel, message).then(() => onPublished?.(items.length), () => this.context.fellBack("redis"));
  }

  forget(id: string): void {
    const { waiting } = this.keys;
    this.context.redis.run(waiting, (connection) => connection.zrem(waiting, id)).catch(() => undefined);
  }

  leave(): void {
    if (this.left) return;
    this.left = true;
    this.context.forget(this.group);
    if (!this.holding) return;
    this.holding = false;
    this.context.onLease?.("released");
    this.handOver();
  }

  /** Frees the lease, and tells the others to take it now rather than when it expires. */
  private handOver(): void {
    const { redis, channels, replica } = this.context;
    const { lease, channel } = this.keys;
    const handover: SharedMessage = { from: replica, handover: true };
    redis
      .run(lease, (connection) => RELEASE.run(connection, [lease], [replica]))
      .then(() => channels.publish(channel, JSON.stringify(handover)))
      .catch(() => undefined);
  }

  /** @internal The holder handed over, or this replica may have missed what it published: poll now. */
  readAgain(): void {
    this.lastHeard = 0;
    this.onHandover();
  }

  /** @internal What another replica published. */
  heard(message: SharedMessage): void {
    if (message.handover) {
      this.readAgain();
      return;
    }
    this.lastHeard = this.context.clock.now();
    const items: UpstreamQuery[] = [];
    for (const item of message.items ?? []) {
      const parsed = upstreamQuerySchema.safeParse(item);
      if (parsed.success) items.push(parsed.data);
    }
    this.context.onReceived?.(items.length);
    this.onShared(items, message.trace);
  }
}

const TOO_LATE = Symbol("too late");

/**
 * `pending`'s value, or `TOO_LATE` once `ms` have passed. The deadline is checked after the event
 * loop's I/O of that turn (`setImmediate`): an answer that came in while the process was busy past
 * the deadline is still taken, so a stalled process does not poll alone for nothing.
 */
function answeredWithin<T>(pending: Promise<T>, ms: number, clock: Pick<Clock, "setTimeout" | "clearTimeout">): Promise<T | typeof TOO_LATE> {
  return new Promise((resolve) => {
    const timer = clock.setTimeout(() => setImmediate(() => resolve(TOO_LATE)), ms);
    void pending.then((value) => {
      clock.clearTimeout(timer);
      resolve(value);
    });
  });
}
