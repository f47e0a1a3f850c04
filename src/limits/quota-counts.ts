import type { QuotaPeriod } from "./quota-periods.js";

/** A quota's limit in one of its periods: what a reservation must fit under. */
export interface QuotaLimit {
  period: QuotaPeriod;
  limit: number;
}

/** What a reservation found: whether it fit under every quota (and was taken), and each period's count before it. */
export interface QuotaCheck {
  reserved: boolean;
  used: number[];
}

/**
 * Whether `tokens` more fit under every quota whose counts are `used`: none has been reached, and
 * none would be passed (docs/rate-limits.md#reservations). One rule for both backends (the Redis
 * script applies the same).
 */
export function fitsQuotas(quotas: readonly QuotaLimit[], used: readonly number[], tokens: number): boolean {
  return quotas.every(({ limit }, index) => {
    const count = used[index] ?? 0;
    return count < limit && count + tokens <= limit;
  });
}

/**
 * The token quotas counted in this process (docs/rate-limits.md#quotas): one count per key and
 * period, dropped once its period has ended (a new period is a new count). The default without
 * Redis, and the insurance of the Redis counters while Redis does not answer.
 */
export class QuotaCounts {
  private readonly counts = new Map<string, { tokens: number; endsAt: number }>();
  /** When the earliest count ends: until then there is nothing to drop. */
  private nextEnd = Number.POSITIVE_INFINITY;

  constructor(private readonly now: () => number) {}

  /** The tokens charged to `key` in each of `periods`. */
  used(key: string, periods: readonly QuotaPeriod[]): number[] {
    return periods.map((period) => this.counts.get(`${key}|${period.id}`)?.tokens ?? 0);
  }

  /** Adds `tokens` to every period of `quotas` when they fit under each (`fitsQuotas`); the counts before either way. */
  reserve(key: string, quotas: readonly QuotaLimit[], tokens: number): QuotaCheck {
    const periods = quotas.map((quota) => quota.period);
    const used = this.used(key, periods);
    const reserved = fitsQuotas(quotas, used, tokens);
    if (reserved) this.add(key, periods, tokens);
    return { reserved, used };
  }

  /** Adds `tokens` to `key`'s count in each of `periods`. */
  add(key: string, periods: readonly QuotaPeriod[], tokens: number): void {
    if (tokens <= 0) return;
    this.dropEnded();
    for (const period of periods) {
      const name = `${key}|${period.id}`;
      const count = this.counts.get(name);
      if (count) count.tokens += tokens;
      else this.counts.set(name, { tokens, endsAt: period.endsAt });
      this.nextEnd = Math.min(this.nextEnd, period.endsAt);
    }
  }

  /** Takes `tokens` (a reservation given back) out of `key`'s count in each of `periods` that still has one, never below nothing. */
  remove(key: string, periods: readonly QuotaPeriod[], tokens: number): void {
    for (const period of periods) {
      const count = this.counts.get(`${key}|${period.id}`);
      if (count) count.tokens = Math.max(0, count.tokens - tokens);
    }
  }

  private dropEnded(): void {
    const now = this.now();
    if (now < this.nextEnd) return;
    this.nextEnd = Number.POSITIVE_INFINITY;
    for (const [name, count] of this.counts) {
      if (count.endsAt <= now) this.counts.delete(name);
      else this.nextEnd = Math.min(this.nextEnd, count.endsAt);
    }
  }
}
