import { randomUUID } from "node:crypto";
import type { Cluster, Redis } from "ioredis";
import type { Slot } from "./limit-counters.js";

// Slots are a sorted set per key: member = slot id, score = when it expires (Redis's own clock, so
// replicas' clocks do not matter). Expired slots are dropped before counting, so the slots of a
// replica that died free themselves.
const NOW_MS = "local time = redis.call('TIME') local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)";
const TAKE_SLOT = `${NOW_MS}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`;
// Renewal adds a slot back if it expired meanwhile (Redis was away longer than a slot lives): the answer is still in flight.
const RENEW_SLOTS = `${NOW_MS}
for index = 2, #ARGV do redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[index]) end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return #ARGV - 1`;

interface SlotCommands {
  adapterTakeSlot(key: string, limit: number, id: string, ttlMs: number): Promise<number>;
  adapterRenewSlots(key: string, ttlMs: number, ...ids: string[]): Promise<number>;
}

/**
 * The answers in flight counted in Redis (docs/rate-limits.md#how-they-are-counted): a sorted set
 * of expiring slots per key (`slotKey`), each slot this replica holds renewed every third of its
 * lifetime while its answer runs, so that a replica that dies frees its slots within that time.
 */
export class RedisSlots {
  private readonly redis: Redis & SlotCommands;
  private readonly replica = randomUUID().slice(0, 8);
  private nextSlot = 0;
  /** Slots held in Redis, by key: renewed together while answers run. */
  private readonly holding = new Map<string, Set<string>>();
  private heldCount = 0;
  private renewal: NodeJS.Timeout | undefined;

  constructor(
    redis: Redis | Cluster,
    private readonly slotKey: (key: string) => string,
    private readonly slotTtlMs: number,
    /** Runs a write nobody waits for (a release), so that closing can wait for it. */
    private readonly background: (write: Promise<unknown>) => void,
  ) {
    const commands = redis as Redis & SlotCommands;
    commands.defineCommand("adapterTakeSlot", { numberOfKeys: 1, lua: TAKE_SLOT });
    commands.defineCommand("adapterRenewSlots", { numberOfKeys: 1, lua: RENEW_SLOTS });
    this.redis = commands;
  }

  /** Slots this replica holds in Redis now. */
  get held(): number {
    return this.heldCount;
  }

  /** Takes one of the key's `limit` slots, or null when all are held; rejects when Redis does not answer. */
  async take(key: string, limit: number): Promise<Slot | null> {
    const redisKey = this.slotKey(key);
    const id = `${this.replica}:${(this.nextSlot += 1)}`;
    const taken = await this.redis.adapterTakeSlot(redisKey, limit, id, this.slotTtlMs);
    if (Number(taken) !== 1) return null;
    this.hold(redisKey, id);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.unhold(redisKey, id);
        // Failing (Redis away), the slot expires on its own within its lifetime.
        this.background(this.redis.zrem(redisKey, id));
      },
    };
  }

  /** Stops renewing. */
  close(): void {
    clearInterval(this.renewal);
    this.renewal = undefined;
  }

  private hold(redisKey: string, id: string): void {
    let ids = this.holding.get(redisKey);
    if (!ids) {
      ids = new Set();
      this.holding.set(redisKey, ids);
    }
    ids.add(id);
    this.heldCount += 1;
    if (!this.renewal) {
      this.renewal = setInterval(() => this.renew(), Math.max(100, Math.floor(this.slotTtlMs / 3)));
      this.renewal.unref();
    }
  }

  private unhold(redisKey: string, id: string): void {
    const ids = this.holding.get(redisKey);
    if (!ids?.delete(id)) return;
    this.heldCount -= 1;
    if (ids.size === 0) this.holding.delete(redisKey);
    if (this.holding.size === 0) this.close();
  }

  /** Extends every held slot's life; one script per key. A failure leaves them to be renewed next time. */
  private renew(): void {
    for (const [redisKey, ids] of this.holding) {
      this.redis.adapterRenewSlots(redisKey, this.slotTtlMs, ...ids).catch(() => undefined);
    }
  }
}
