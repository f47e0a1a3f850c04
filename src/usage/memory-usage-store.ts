import { utcDayStart } from "../util/utc-calendar.js";
import { totalField, type UsageCharge, type UsageStore, type UsageTotal } from "./usage-store.js";

/** How many charge ids are remembered: a retry comes within seconds, long before this many later charges. */
const CHARGES_REMEMBERED = 16_384;

/**
 * Usage kept in this process (one replica, no Redis): a map per UTC day, the oldest days dropped
 * past `retentionDays` (counted back from the newest day written); the latest charges' ids, so
 * that each is applied once as in Redis.
 */
export class MemoryUsageStore implements UsageStore {
  private readonly days = new Map<string, Map<string, UsageTotal>>();
  /** The ids of the latest charges applied, oldest first. */
  private readonly applied = new Set<string>();

  constructor(private readonly retentionDays: number) {}

  async add(charge: UsageCharge): Promise<void> {
    if (this.applied.has(charge.id)) return;
    this.applied.add(charge.id);
    if (this.applied.size > CHARGES_REMEMBERED) this.applied.delete(this.applied.values().next().value as string);
    let day = this.days.get(charge.day);
    if (!day) {
      day = new Map();
      this.days.set(charge.day, day);
      this.dropOldDays(charge.day);
    }
    const field = totalField(charge);
    const { id: _id, ...counted } = charge;
    const total = day.get(field) ?? { ...counted, inputTokens: 0, outputTokens: 0, reasoningTokens: 0, answers: 0 };
    total.inputTokens += charge.inputTokens;
    total.outputTokens += charge.outputTokens;
    total.reasoningTokens += charge.reasoningTokens;
    total.answers += 1;
    day.set(field, total);
  }

  async totals(days: readonly string[]): Promise<UsageTotal[]> {
    return days.flatMap((day) => [...(this.days.get(day)?.values() ?? [])].map((total) => ({ ...total })));
  }

  private dropOldDays(newest: string): void {
    const oldest = new Date(utcDayStart(newest) - (this.retentionDays - 1) * 86_400_000).toISOString().slice(0, 10);
    for (const day of this.days.keys()) if (day < oldest) this.days.delete(day);
  }
}
