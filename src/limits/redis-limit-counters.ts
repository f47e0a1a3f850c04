import { randomUUID } from "node:crypto";
import type { Cluster, Redis } from "ioredis";
import type { Logger } from "pino";
import type { RedisKeys } from "../redis/keys.js";
import { storedCountSchema } from "../redis/stored-count.js";
import { isReplyError } from "../redis/redis-connection.js";
import { type CountedRequest, type LimitCounters, loadLimiters, MemoryLimitCounters, type Slot, type WindowCount, WindowCounts } from "./limit-counters.js";
import type { QuotaPeriod } from "./quota-periods.js";

/**
 * Why a limit was counted in process (docs/rate-limits.md): its node known down (`unavailable`,
 * nothing sent), no answer (`no_answer`: past the bound, or the connection lost), or an
 * error reply (`error`: what a misnamed key, a `CROSSSLOT`, would be). Operators tell a busy
 * moment from a fault by it.
 */
export type FallbackReason = "unavailable" | "no_answer" | "error";

/** Settings of the Redis counters. */
export interface RedisLimitCountersOptions {
  /** A connection of the adapter's (single node or cluster); the counters never close it. */
  redis: Redis | Cluster;
  /** The deployment's key names: every key is `<prefix>limit:{<credential hash>:<workspace>}:<kind>`. */
  keys: RedisKeys;
  windowSeconds: number;
  /** How long a slot lives unless renewed; held slots are renewed every third of it. */
  slotTtlMs: number;
  logger: Logger;
  /** The Redis key of a key's window (default: `keys.limitWindow`, the rate limits' names); always a name from redis/keys.ts. */
  windowKey?: (key: string, kind: "rpm" | "tpm") => string;
  /** A limit counted in process because Redis did not answer, and why. */
  onFallback?: (reason: FallbackReason) => void;
  /** The adapter's clock: the quotas' periods follow it (Redis's own clock keeps the slots). */
  now?: () => number;
  /**
   * Whether the node that holds a group's keys (named by the group's tag) is known to answer now
   * (the adapter's gate): while it is not, that group's limits are counted in process at once.
   */
  available?: (tag: string) => boolean;
}

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

// A charge adds to each period's count and keeps it a day past the period's end (ARGV: tokens, then one TTL per key).
const CHARGE_QUOTAS = `for index, key in ipairs(KEYS) do
  redis.call('INCRBY', key, ARGV[1])
  redis.call('PEXPIRE', key, ARGV[index + 1])
end
return #KEYS`;

/** How long a quota's count outlives its period: the replicas' clocks may differ a little. */
const QUOTA_GRACE_MS = 24 * 3600_000;

interface SlotCommands {
  adapterTakeSlot(key: string, limit: number, id: string, ttlMs: number): Promise<number>;
  adapterRenewSlots(key: string, ttlMs: number, ...ids: string[]): Promise<number>;
  adapterChargeQuotas(...keysThenArguments: (string | number)[]): Promise<number>;
}

/**
 * The limits shared by every replica through Redis: rate-limiter-flexible's `RateLimiterRedis`
 * (one atomic script per request) for the windows, a sorted set of expiring slots for the answers
 * in flight. Each key's windows and slots share its hash tag, so no script crosses a cluster slot.
 * When Redis does not answer, the same limits are counted in this process at once (logged once,
 * counted in a metric), and shared again as soon as Redis answers.
 */
export class RedisLimitCounters implements LimitCounters {
  private readonly windows: WindowCounts;
  private readonly local: MemoryLimitCounters;
  private readonly redis: Redis & SlotCommands;
  private readonly replica = randomUUID().slice(0, 8);
  private nextSlot = 0;
  /** Slots held in Redis, by key: renewed together while answers run. */
  private readonly held = new Map<string, Set<string>>();
  private heldCount = 0;
  private renewal: NodeJS.Timeout | undefined;
  private readonly releasing = new Set<Promise<unknown>>();
  private degraded = false;
  private readonly now: () => number;

  constructor(private readonly options: RedisLimitCountersOptions) {
    const redis = options.redis as Redis & SlotCommands;
    redis.defineCommand("adapterTakeSlot", { numberOfKeys: 1, lua: TAKE_SLOT });
    redis.defineCommand("adapterRenewSlots", { numberOfKeys: 1, lua: RENEW_SLOTS });
    redis.defineCommand("adapterChargeQuotas", { lua: CHARGE_QUOTAS });
    this.redis = redis;
    this.now = options.now ?? Date.now;
    this.local = new MemoryLimitCounters(options.windowSeconds, this.now);
    const { RateLimiterRedis } = loadLimiters();
    this.windows = new WindowCounts(
      (points) =>
        new RateLimiterRedis({
          storeClient: options.redis,
          // The whole key comes from the key names (windowKey below), none is added by the library.
          keyPrefix: "",
          points,
          duration: options.windowSeconds,
          // A connection that is not up fails at once, without waiting for a command timeout.
          rejectIfRedisNotReady: true,
        }),
      (write) => this.background(write),
      options.windowKey ?? ((key, kind) => options.keys.limitWindow(key, kind)),
    );
  }

  countRequest(key: string, limit: number): Promise<CountedRequest> {
    return this.inRedis(
      key,
      () => this.windows.countRequest(key, limit),
      () => this.local.countRequest(key, limit),
    );
  }

  tokensUsed(key: string, limit: number): Promise<WindowCount> {
    return this.inRedis(
      key,
      () => this.windows.tokensUsed(key, limit),
      () => this.local.tokensUsed(key, limit),
    );
  }

  chargeTokens(key: string, limit: number, tokens: number): void {
    if (tokens <= 0) return;
    this.background(
      this.inRedis(
        key,
        () => this.windows.addTokens(key, limit, tokens),
        async () => this.local.chargeTokens(key, limit, tokens),
      ),
    );
  }

  quotaUsed(key: string, periods: readonly QuotaPeriod[]): Promise<number[]> {
    const names = periods.map((period) => this.options.keys.limitQuota(key, period.id));
    return this.inRedis(
      key,
      async () => this.quotaCounts(names, await this.redis.mget(...names)),
      () => this.local.quotaUsed(key, periods),
    );
  }

  /** Quota counts as read back: none yet is 0; one that does not parse counts as nothing (never a refusal on a value the adapter did not write), and is logged. */
  private quotaCounts(names: readonly string[], values: readonly (string | null)[]): number[] {
    return values.map((value, index) => {
      if (value === null) return 0;
      const count = storedCountSchema.safeParse(value);
      if (count.success) return count.data;
      this.options.logger.warn({ record: names[index] }, "a stored quota count does not parse: counted as nothing");
      return 0;
    });
  }

  chargeQuota(key: string, periods: readonly QuotaPeriod[], tokens: number): void {
    if (tokens <= 0 || periods.length === 0) return;
    const now = this.now();
    const names = periods.map((period) => this.options.keys.limitQuota(key, period.id));
    const lifetimes = periods.map((period) => Math.max(1, period.endsAt - now) + QUOTA_GRACE_MS);
    this.background(
      this.inRedis(
        key,
        () => this.redis.adapterChargeQuotas(names.length, ...names, Math.ceil(tokens), ...lifetimes),
        async () => {
          this.local.chargeQuota(key, periods, tokens);
          return 0;
        },
      ),
    );
  }

  takeSlot(key: string, limit: number): Promise<Slot | null> {
    return this.inRedis(
      key,
      () => this.takeSharedSlot(key, limit),
      () => this.local.takeSlot(key, limit),
    );
  }

  get slotsHeld(): number {
    return this.heldCount + this.local.slotsHeld;
  }

  get shared(): boolean {
    return this.redis.status === "ready" && !this.degraded;
  }

  async close(): Promise<void> {
    clearInterval(this.renewal);
    this.renewal = undefined;
    await Promise.allSettled([...this.releasing]);
  }

  private async takeSharedSlot(key: string, limit: number): Promise<Slot | null> {
    const redisKey = this.slotKey(key);
    const id = `${this.replica}:${(this.nextSlot += 1)}`;
    const taken = await this.redis.adapterTakeSlot(redisKey, limit, id, this.options.slotTtlMs);
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

  private slotKey(key: string): string {
    return this.options.keys.limitSlots(key);
  }

  private hold(redisKey: string, id: string): void {
    let ids = this.held.get(redisKey);
    if (!ids) {
      ids = new Set();
      this.held.set(redisKey, ids);
    }
    ids.add(id);
    this.heldCount += 1;
    if (!this.renewal) {
      this.renewal = setInterval(() => this.renew(), Math.max(100, Math.floor(this.options.slotTtlMs / 3)));
      this.renewal.unref();
    }
  }

  private unhold(redisKey: string, id: string): void {
    const ids = this.held.get(redisKey);
    if (!ids?.delete(id)) return;
    this.heldCount -= 1;
    if (ids.size === 0) this.held.delete(redisKey);
    if (this.held.size === 0) {
      clearInterval(this.renewal);
      this.renewal = undefined;
    }
  }

  /** Extends every held slot's life; one script per key. A failure leaves them to be renewed next time. */
  private renew(): void {
    for (const [redisKey, ids] of this.held) {
      this.redis.adapterRenewSlots(redisKey, this.options.slotTtlMs, ...ids).catch(() => undefined);
    }
  }

  /** Runs a Redis write nobody waits for, so that closing can wait for it. */
  private background(write: Promise<unknown>): void {
    const tracked = write.catch(() => undefined);
    this.releasing.add(tracked);
    void tracked.finally(() => this.releasing.delete(tracked));
  }

  /** `remote` against Redis; when the node of `tag`'s keys does not answer, `local` in this process instead. */
  private async inRedis<T>(tag: string, remote: () => Promise<T>, local: () => Promise<T>): Promise<T> {
    if (this.options.available?.(tag) === false) {
      this.fellBack("unavailable");
      return local();
    }
    let value: T;
    try {
      value = await remote();
    } catch (error) {
      this.fellBack(isReplyError(error) ? "error" : "no_answer");
      return local();
    }
    if (this.degraded) {
      this.degraded = false;
      this.options.logger.info("Redis answers again: rate limits are shared between replicas again");
    }
    return value;
  }

  private fellBack(reason: FallbackReason): void {
    this.options.onFallback?.(reason);
    if (this.degraded) return;
    this.degraded = true;
    this.options.logger.warn("Redis does not answer: rate limits are counted by each replica on its own until it does");
  }
}
