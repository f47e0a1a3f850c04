/** The token quotas (docs/rate-limits.md#quotas): per UTC day and per UTC calendar month. */
export type QuotaKind = "tpd" | "tpmo";

/** One quota's current period: its name among the key's counters, and when it ends. */
export interface QuotaPeriod {
  kind: QuotaKind;
  /** `tpd:2026-11-23`, `tpmo:2026-11`: a new period is a new counter, so a quota resets by its name changing. */
  id: string;
  /** Milliseconds since the epoch at which the period ends (the next UTC midnight, or the next month's first). */
  endsAt: number;
}

/** The period of `kind` that `now` (milliseconds since the epoch) falls in, in UTC. */
export function quotaPeriod(kind: QuotaKind, now: number): QuotaPeriod {
  const date = new Date(now);
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth();
  const monthName = `${year}-${String(month + 1).padStart(2, "0")}`;
  if (kind === "tpmo") return { kind, id: `tpmo:${monthName}`, endsAt: Date.UTC(year, month + 1, 1) };
  const day = date.getUTCDate();
  return { kind, id: `tpd:${monthName}-${String(day).padStart(2, "0")}`, endsAt: Date.UTC(year, month, day + 1) };
}

/** The UTC day a moment falls in, `2026-11-23`: the usage's day bucket too. */
export function utcDay(now: number): string {
  return quotaPeriod("tpd", now).id.slice(4);
}
