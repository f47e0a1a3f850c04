import { createRequire } from "node:module";
import type * as Flexible from "rate-limiter-flexible";
import { QuotaCounts } from "./quota-counts.js";
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
  /** The tokens charged in the key's window. */
  tokensUsed(key: string, limit: number): Promise<WindowCount>;
  /** Charges an answer's tokens to the key's window (in the background). */
  chargeTokens(key: string, limit: number, tokens: number): void;
  /** The tokens charged to the key in each quota period (docs/rate-limits.md#quotas). */
  quotaUsed(key: string, periods: readonly QuotaPeriod[]): Promise<number[]>;
  /** Charges an answer's tokens to the key's quota periods (in the background). */
  chargeQuota(key: string, periods: readonly QuotaPeriod[], tokens: number): void;
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

  chargeTokens(key: string, limit: number, tokens: number): void {
    if (tokens > 0) void this.windows.addTokens(key, limit, tokens);
  }

  async quotaUsed(key: string, periods: readonly QuotaPeriod[]): Promise<number[]> {
    return this.quotas.used(key, periods);
  }

  chargeQuota(key: string, periods: readonly QuotaPeriod[], tokens: number): void {
    if (tokens > 0) this.quotas.add(key, periods, tokens);
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
