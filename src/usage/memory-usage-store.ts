import { utcDayStart } from "../util/utc-calendar.js";
import { totalField, type UsageCharge, type UsageStore, type UsageTotal } from "./usage-store.js";

/**
 * Usage kept in this process (one replica, no Redis): a map per UTC day, the oldest days dropped
 * past `retentionDays` (counted back from the newest day written).
 */
export class MemoryUsageStore implements UsageStore {
  private readonly days = new Map<string, Map<string, UsageTotal>>();

  constructor(private readonly retentionDays: number) {}

  async add(charge: UsageCharge): Promise<void> {
    let day = this.days.get(charge.day);
    if (!day) {
      day = new Map();
      this.days.set(charge.day, day);
      this.dropOldDays(charge.day);
    }
    const field = totalField(charge);
    const total = day.get(field) ?? { ...charge, inputTokens: 0, outputTokens: 0, reasoningTokens: 0, answers: 0 };
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
