import { utcDayOf, utcMonthOf } from "../util/utc-calendar.js";

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
  const { name, endsAt } = kind === "tpd" ? utcDayOf(now) : utcMonthOf(now);
  return { kind, id: `${kind}:${name}`, endsAt };
}
