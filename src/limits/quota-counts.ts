import type { QuotaPeriod } from "./quota-periods.js";

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

  /** Adds `tokens` to `key`'s count in each of `periods`. */
  add(key: string, periods: readonly QuotaPeriod[], tokens: number): void {
    this.dropEnded();
    for (const period of periods) {
      const name = `${key}|${period.id}`;
      const count = this.counts.get(name);
      if (count) count.tokens += tokens;
      else this.counts.set(name, { tokens, endsAt: period.endsAt });
      this.nextEnd = Math.min(this.nextEnd, period.endsAt);
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
