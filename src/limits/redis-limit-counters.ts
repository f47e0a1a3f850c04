import type { Cluster, Redis } from "ioredis";
import type { Logger } from "pino";
import type { RedisKeys } from "../redis/keys.js";
import { isReplyError } from "../redis/redis-connection.js";
import {
  type CountedRequest,
  type HeldQuota,
  type LimitCounters,
  loadLimiters,
  MemoryLimitCounters,
  type QuotaReservation,
  type ReservedTokens,
  type Slot,
  type WindowCount,
  WindowCounts,
} from "./limit-counters.js";
import type { QuotaLimit } from "./quota-counts.js";
import type { QuotaPeriod } from "./quota-periods.js";
import { RedisQuotaCounts } from "./redis-quota-counts.js";
import { RedisSlots } from "./redis-slots.js";

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

/**
 * The limits shared by every replica through Redis: rate-limiter-flexible's `RateLimiterRedis`
 * (one atomic script per request) for the windows, a sorted set of expiring slots for the answers
 * in flight (`RedisSlots`), a count per quota period (`RedisQuotaCounts`). Each key's windows,
 * slots and quotas share its hash tag, so no script crosses a cluster slot.
 * When Redis does not answer, the same limits are counted in this process at once (logged once,
 * counted in a metric), and shared again as soon as Redis answers.
 */
export class RedisLimitCounters implements LimitCounters {
  private readonly windows: WindowCounts;
  private readonly quotas: RedisQuotaCounts;
  private readonly local: MemoryLimitCounters;
  private readonly slots: RedisSlots;
  private readonly releasing = new Set<Promise<unknown>>();
  private degraded = false;
  private readonly now: () => number;

  constructor(private readonly options: RedisLimitCountersOptions) {
    const slotKey = (key: string) => options.keys.limitSlots(key);
    this.slots = new RedisSlots(options.redis, slotKey, options.slotTtlMs, (write) => this.background(write));
    this.now = options.now ?? Date.now;
    this.quotas = new RedisQuotaCounts(options.redis, options.keys, options.logger, this.now);
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

  reserveTokens(key: string, limit: number, tokens: number): Promise<ReservedTokens> {
    return this.inRedis(
      key,
      () => this.windows.reserveTokens(key, limit, tokens),
      () => this.local.reserveTokens(key, limit, tokens),
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
    return this.inRedis(
      key,
      () => this.quotas.used(key, periods),
      () => this.local.quotaUsed(key, periods),
    );
  }

  /**
   * In Redis, or in process while it does not answer. Settled in Redis when it answers then, even a
   * reservation taken in process (the answer's tokens are shared, and what this process held is
   * given back here); in process otherwise.
   */
  async reserveQuota(key: string, id: string, quotas: readonly QuotaLimit[], tokens: number): Promise<QuotaReservation> {
    let local: QuotaReservation | undefined;
    const check = await this.inRedis(
      key,
      () => this.quotas.reserve(key, id, quotas, tokens),
      async () => (local = await this.local.reserveQuota(key, id, quotas, tokens)),
    );
    const reservedIn = check.reserved && !local ? quotas.map((quota) => quota.period) : [];
    let settled = !check.reserved;
    return {
      reserved: check.reserved,
      used: check.used,
      settle: (charged, periods) => {
        if (settled) return;
        settled = true;
        this.settleIn(key, id, reservedIn, charged, periods, local);
      },
    };
  }

  settleQuota(key: string, held: HeldQuota, tokens: number, periods: readonly QuotaPeriod[]): void {
    this.settleIn(key, held.id, held.periods, tokens, periods, undefined);
  }

  /** A settlement: in Redis (once, by the reservation's record), then what this process held given back; in process when Redis does not answer. */
  private settleIn(
    key: string,
    id: string,
    reservedIn: readonly QuotaPeriod[],
    tokens: number,
    periods: readonly QuotaPeriod[],
    local: QuotaReservation | undefined,
  ): void {
    this.background(
      this.inRedis(
        key,
        async () => {
          await this.quotas.settle(key, id, reservedIn, tokens, periods, local !== undefined);
          local?.settle(0, []);
        },
        async () => {
          if (local) local.settle(tokens, periods);
          else this.local.settleQuota(key, { id, periods: reservedIn, tokens: 0 }, tokens, periods);
        },
      ),
    );
  }

  takeSlot(key: string, limit: number): Promise<Slot | null> {
    return this.inRedis(
      key,
      () => this.slots.take(key, limit),
      () => this.local.takeSlot(key, limit),
    );
  }

  get slotsHeld(): number {
    return this.slots.held + this.local.slotsHeld;
  }

  get shared(): boolean {
    return this.options.redis.status === "ready" && !this.degraded;
  }

  async close(): Promise<void> {
    this.slots.close();
    await Promise.allSettled([...this.releasing]);
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
