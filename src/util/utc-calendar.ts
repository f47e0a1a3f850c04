/** A UTC calendar period a moment falls in: its name, and when it ends (milliseconds since the epoch). */
export interface CalendarPeriod {
  /** `2026-11-23` for a day, `2026-11` for a month. */
  name: string;
  endsAt: number;
}

const pad = (value: number) => String(value).padStart(2, "0");

/** The UTC day `now` (milliseconds since the epoch) falls in: usage's day buckets and the daily quota's period. */
export function utcDayOf(now: number): CalendarPeriod {
  const date = new Date(now);
  const [year, month, day] = [date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()];
  return { name: `${year}-${pad(month + 1)}-${pad(day)}`, endsAt: Date.UTC(year, month, day + 1) };
}

/** The UTC calendar month `now` falls in: the monthly quota's period. */
export function utcMonthOf(now: number): CalendarPeriod {
  const date = new Date(now);
  const [year, month] = [date.getUTCFullYear(), date.getUTCMonth()];
  return { name: `${year}-${pad(month + 1)}`, endsAt: Date.UTC(year, month + 1, 1) };
}

/** The start of a UTC day named `2026-11-23`, in milliseconds since the epoch. */
export function utcDayStart(name: string): number {
  return Date.parse(`${name}T00:00:00Z`);
}
