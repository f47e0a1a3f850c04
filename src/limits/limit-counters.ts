import { createRequire } from "node:module";
import type * as Flexible from "rate-limiter-flexible";
import { type QuotaCheck, QuotaCounts, type QuotaLimit } from "./quota-counts.js";
import type { QuotaPeriod } from "./quota-periods.js";

/** The classes of rate-limiter-flexible the counters use. */
export type Limiters = Pick<typeof Flexible, "RateLimiterMemory" | "RateLimiterRedis" | "RateLimiterRes">;

/**
 * rate-limiter-flexible's classes, loaded only once limits are configured, and only the files
 * used: its index loads every backend it has (databases, clusters), about 0.2 s of start-up and
 * 10 MB that an adapter without limits would pay for nothing.
 */
export function loadLimiters(): Limiters {
  const require = createRequire(import.meta.url);
  return {
    RateLimiterMemory: require("rate-limiter-flexible/lib/RateLimiterMemory.js") as Limiters["RateLimiterMemory"],
    RateLimiterRedis: require("rate-limiter-flexible/lib/RateLimiterRedis.js") as Limiters["RateLimiterRedis"],
    RateLimiterRes: require("rate-limiter-flexible/lib/RateLimiterRes.js") as Limiters["RateLimiterRes"],
  };
}

/** A window's count for one key after an operation: what it holds, and when it starts from zero again. */
export interface WindowCount {
  used: number;
  /** Milliseconds until the window ends (0 when nothing is counted in it). */
  resetMs: number;
}

/** One request counted (or not: the window was full) in a key's requests-per-minute window. */
export interface CountedRequest extends WindowCount {
  counted: boolean;
  /** Takes the request back out of the window (it was refused for another limit); nothing when not counted. */
  uncount(): void;
}

/**
 * Tokens reserved for one answer in a key's tokens-per-minute window (`LimitCounters.reserveTokens`):
 * `used` is the window's count before them.
 */
export interface ReservedTokens extends WindowCount {
  /** Whether they fit (the window had not reached its limit, and does not pass it with them): only then are they held. */
  reserved: boolean;
  /** Changes the reservation by `delta` tokens (the answer's count less what was reserved), in the store it was taken in; nothing when not reserved. */
  adjust(delta: number): void;
}

/** Tokens reserved for one answer in a key's quota periods (`LimitCounters.reserveQuota`): all of them, or none. */
export interface QuotaReservation extends QuotaCheck {
  /**
   * Settles the reservation once (later calls do nothing): gives it back and charges `tokens` to
   * `periods` (those the answer ends in). Nothing when it was not reserved.
   */
  settle(tokens: number, periods: readonly QuotaPeriod[]): void;
}

/** A quota reservation as another replica settles it (a background answer taken over): its id, the periods it was taken in, its tokens. */
export interface HeldQuota {
  id: string;
  periods: readonly QuotaPeriod[];
  tokens: number;
}

/** A concurrency slot held for one answer. */
export interface Slot {
  /** Frees the slot; later calls do nothing. */
  release(): void;
}

/**
 * Where the limits are counted (docs/rate-limits.md): in process, or in Redis so that replicas
 * share them. A key is `{<credential hash>:<workspace>}`, a Redis Cluster hash tag: everything one
 * client key counts in one workspace lives in one slot. The operations do not fail: a store that
 * cannot count falls back to counting in process.
 */
export interface LimitCounters {
  /** Counts one request in the key's window unless the window already holds `limit`. */
  countRequest(key: string, limit: number): Promise<CountedRequest>;
  /** The tokens charged (and reserved) in the key's window. */
  tokensUsed(key: string, limit: number): Promise<WindowCount>;
  /** Reserves an answer's expected tokens in the key's window when they fit under `limit` (docs/rate-limits.md#reservations). */
  reserveTokens(key: string, limit: number, tokens: number): Promise<ReservedTokens>;
  /** Charges an answer's tokens to the key's window (in the background): an answer that ends in a later window than its reservation's. */
  chargeTokens(key: string, limit: number, tokens: number): void;
  /** The tokens charged (and reserved) to the key in each quota period (docs/rate-limits.md#quotas). */
  quotaUsed(key: string, periods: readonly QuotaPeriod[]): Promise<number[]>;
  /**
   * Reserves an answer's expected tokens in every one of the key's quota periods when they fit
   * under each (`fitsQuotas`), as one step; `id` names the reservation, so that a command sent
   * again takes it once and its settlement applies once.
   */
  reserveQuota(key: string, id: string, quotas: readonly QuotaLimit[], tokens: number): Promise<QuotaReservation>;
  /**
   * Settles a reservation another replica took (a background answer taken over) once: what is
   * still held of it is given back and `tokens` charged to `periods`, in the background.
   */
  settleQuota(key: string, held: HeldQuota, tokens: number, periods: readonly QuotaPeriod[]): void;
  /** Takes one of the key's `limit` slots, or null when all are held. */
  takeSlot(key: string, limit: number): Promise<Slot | null>;
  /** Slots held through these counters now (this process's answers in flight under a concurrency limit). */
  readonly slotsHeld: number;
  /** Whether the counts are shared between replicas now (Redis answers), rather than kept in this process. */
  readonly shared: boolean;
  /** Stops renewing slots and waits for the releases under way. */
  close(): Promise<void>;
}

/** The two windows of a key: requests per minute and tokens per minute. */
type WindowKind = "rpm" | "tpm";

/**
 * Fixed windows counted by rate-limiter-flexible limiters (in process or in Redis, as `create`
 * builds them), one limiter per kind and limit; the key's window is `windowKey(key, kind)`. A request taken
 * back is written in the `background`.
 */
export class WindowCounts {
  private readonly limiters = new Map<string, Flexible.RateLimiterAbstract>();
  private readonly RateLimiterRes = loadLimiters().RateLimiterRes;

  constructor(
    private readonly create: (points: number) => Flexible.RateLimiterAbstract,
    private readonly background: (write: Promise<unknown>) => void = (write) => void write.catch(() => undefined),
    /** The limiter key of a key's window: `<key>:<kind>` in process; Redis's names come from redis/keys.ts. */
    private readonly windowKey: (key: string, kind: WindowKind) => string = (key, kind) => `${key}:${kind}`,
  ) {}

  /** One request counted unless the window holds `limit` already (a request past it is counted but refused, as the library does). */
  async countRequest(key: string, limit: number): Promise<CountedRequest> {
    let count: WindowCount & { counted: boolean };
    try {
      const result = await this.limiter("rpm", limit).consume(this.windowKey(key, "rpm"), 1);
      count = { counted: true, used: result.consumedPoints, resetMs: result.msBeforeNext };
    } catch (error) {
      if (!(error instanceof this.RateLimiterRes)) throw error;
      count = { counted: false, used: error.consumedPoints, resetMs: error.msBeforeNext };
    }
    let taken = !count.counted;
    const uncount = () => {
      if (taken) return;
      taken = true;
      this.background(this.limiter("rpm", limit).reward(this.windowKey(key, "rpm"), 1));
    };
    return { ...count, uncount };
  }

  /** Adds tokens to the key's window (starting one when there is none). */
  async addTokens(key: string, limit: number, tokens: number): Promise<void> {
    await this.limiter("tpm", limit).penalty(this.windowKey(key, "tpm"), Math.ceil(tokens));
  }

  /**
   * Reserves `tokens` in the key's window: consumed at once (the library refuses past the limit,
   * counting them all the same), and given back when they did not fit. A window that had reached
   * its limit refuses even a reservation of nothing.
   */
  async reserveTokens(key: string, limit: number, tokens: number): Promise<ReservedTokens> {
    const limiter = this.limiter("tpm", limit);
    const name = this.windowKey(key, "tpm");
    const points = Math.ceil(tokens);
    let result: Flexible.RateLimiterRes;
    let over = false;
    try {
      result = await limiter.consume(name, points);
    } catch (error) {
      if (!(error instanceof this.RateLimiterRes)) throw error;
      result = error;
      over = true;
    }
    const used = Math.max(0, result.consumedPoints - points);
    const reserved = !over && used < limit;
    if (!reserved && points > 0) this.background(limiter.reward(name, points));
    const adjust = (delta: number) => {
      const change = Math.round(delta);
      if (!reserved || change === 0) return;
      this.background(change > 0 ? limiter.penalty(name, change) : limiter.reward(name, -change));
    };
    return { reserved, used, resetMs: Math.max(result.msBeforeNext, 0), adjust };
  }

  /**
   * The tokens the key's window holds now. Read by consuming nothing: one atomic script (the
   * library's `get` is a MULTI of three commands), which starts the key's window when it has none.
   */
  async tokensUsed(key: string, limit: number): Promise<WindowCount> {
    let result: Flexible.RateLimiterRes;
    try {
      result = await this.limiter("tpm", limit).consume(this.windowKey(key, "tpm"), 0);
    } catch (error) {
      if (!(error instanceof this.RateLimiterRes)) throw error;
      result = error;
    }
    return { used: result.consumedPoints, resetMs: Math.max(result.msBeforeNext, 0) };
  }

  private limiter(kind: WindowKind, points: number): Flexible.RateLimiterAbstract {
    const name = `${kind}:${points}`;
    let limiter = this.limiters.get(name);
    if (!limiter) {
      limiter = this.create(points);
      this.limiters.set(name, limiter);
    }
    return limiter;
  }
}

/**
 * The limits counted in this process: rate-limiter-flexible's memory limiter for the windows, a
 * count per key for the slots. The default without Redis, and the insurance of the Redis counters
 * while Redis does not answer.
 */
export class MemoryLimitCounters implements LimitCounters {
  private readonly windows: WindowCounts;
  private readonly quotas: QuotaCounts;
  private readonly slots = new Map<string, number>();
  private held = 0;

  /** `now`: the adapter's clock, which the quotas' periods follow. */
  constructor(windowSeconds: number, now: () => number = Date.now) {
    const { RateLimiterMemory } = loadLimiters();
    this.windows = new WindowCounts((points) => new RateLimiterMemory({ points, duration: windowSeconds }));
    this.quotas = new QuotaCounts(now);
  }

  countRequest(key: string, limit: number): Promise<CountedRequest> {
    return this.windows.countRequest(key, limit);
  }

  tokensUsed(key: string, limit: number): Promise<WindowCount> {
    return this.windows.tokensUsed(key, limit);
  }

  reserveTokens(key: string, limit: number, tokens: number): Promise<ReservedTokens> {
    return this.windows.reserveTokens(key, limit, tokens);
  }

  chargeTokens(key: string, limit: number, tokens: number): void {
    if (tokens > 0) void this.windows.addTokens(key, limit, tokens);
  }

  async quotaUsed(key: string, periods: readonly QuotaPeriod[]): Promise<number[]> {
    return this.quotas.used(key, periods);
  }

  async reserveQuota(key: string, _id: string, quotas: readonly QuotaLimit[], tokens: number): Promise<QuotaReservation> {
    const check = this.quotas.reserve(key, quotas, tokens);
    const reservedIn = quotas.map((quota) => quota.period);
    let settled = !check.reserved;
    return {
      ...check,
      settle: (charged, periods) => {
        if (settled) return;
        settled = true;
        this.quotas.remove(key, reservedIn, tokens);
        this.quotas.add(key, periods, charged);
      },
    };
  }

  settleQuota(key: string, _held: HeldQuota, tokens: number, periods: readonly QuotaPeriod[]): void {
    // Another process's reservation is not in this one's counts: only the answer's tokens are.
    this.quotas.add(key, periods, tokens);
  }

  async takeSlot(key: string, limit: number): Promise<Slot | null> {
    const inUse = this.slots.get(key) ?? 0;
    if (inUse >= limit) return null;
    this.slots.set(key, inUse + 1);
    this.held += 1;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.held -= 1;
        const left = (this.slots.get(key) ?? 1) - 1;
        if (left <= 0) this.slots.delete(key);
        else this.slots.set(key, left);
      },
    };
  }

  get slotsHeld(): number {
    return this.held;
  }

  get shared(): boolean {
    return false;
  }

  async close(): Promise<void> {}
}
