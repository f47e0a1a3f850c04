import type { Logger } from "pino";
import { z } from "zod";
import type { RedisKeys } from "../redis/keys.js";
import type { RedisGate } from "../redis/redis-gate.js";
import { storedCountSchema } from "../redis/stored-count.js";
import { utcDayStart } from "../util/utc-calendar.js";
import { totalField, type UsageCharge, type UsageStore, type UsageTotal } from "./usage-store.js";

// One hash per UTC day; a total's four counts are fields `<account>\t<workspace>\t<mode>\t<count>`.
// One script per answer: the charge's mark (KEYS[2], set only if absent: a retried charge whose
// first write went through stops here), the four increments and the day's expiry together.
const ADD_USAGE = `if not redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[6]) then return 0 end
redis.call('HINCRBY', KEYS[1], ARGV[1] .. '\\tin', ARGV[2])
redis.call('HINCRBY', KEYS[1], ARGV[1] .. '\\tout', ARGV[3])
redis.call('HINCRBY', KEYS[1], ARGV[1] .. '\\treasoning', ARGV[4])
redis.call('HINCRBY', KEYS[1], ARGV[1] .. '\\tanswers', 1)
redis.call('EXPIRE', KEYS[1], ARGV[5])
return 1`;

/**
 * How long a charge's mark is kept: far past the ledger's retries (about 4 s) and the gate's
 * deadline, for a write that Redis runs late (it was waiting behind a slow command).
 */
const CHARGE_MARK_SECONDS = 600;

const COUNTS = { in: "inputTokens", out: "outputTokens", reasoning: "reasoningTokens", answers: "answers" } as const;

const NO_USAGE = { inputTokens: 0, outputTokens: 0, reasoningTokens: 0, answers: 0 };

/** A field of a day's hash, as read back: who, where, in which mode, and which of the four counts. */
const usageFieldSchema = z
  .string()
  .transform((field) => field.split("\t"))
  .pipe(z.tuple([z.string().min(1), z.string().min(1), z.string().min(1), z.enum(["in", "out", "reasoning", "answers"])]));


/**
 * Usage in the Redis the replicas share (docs/governance.md#usage): one hash per UTC day
 * (`RedisKeys.usageDay`), kept `retentionDays` past its day, every replica adding to the same
 * totals; through the adapter's gate, so a Redis that does not answer fails fast (the ledger
 * retries the write, and the usage endpoint answers 503). Each charge is applied once, by its id
 * (a mark kept beside the day's hash, in its cluster slot). What is read back is parsed: a field or
 * count that does not parse is left out of the totals and logged, never trusted.
 */
export class RedisUsageStore implements UsageStore {
  constructor(
    private readonly redis: RedisGate,
    private readonly keys: RedisKeys,
    private readonly retentionDays: number,
    private readonly now: () => number,
    private readonly logger: Logger,
  ) {}

  async add(charge: UsageCharge): Promise<void> {
    const key = this.keys.usageDay(charge.day);
    const ends = utcDayStart(charge.day) + 86_400_000;
    const ttlSeconds = Math.max(1, Math.ceil((ends - this.now()) / 1000) + (this.retentionDays - 1) * 86_400);
    const counts = [charge.inputTokens, charge.outputTokens, charge.reasoningTokens, ttlSeconds, CHARGE_MARK_SECONDS].map(String);
    const mark = this.keys.usageCharge(charge.day, charge.id);
    await this.redis.run(key, (redis) => redis.eval(ADD_USAGE, 2, key, mark, totalField(charge), ...counts));
  }

  async totals(days: readonly string[]): Promise<UsageTotal[]> {
    const read = await Promise.all(days.map((day) => {
      const key = this.keys.usageDay(day);
      return this.redis.run(key, (redis) => redis.hgetall(key));
    }));
    return read.flatMap((fields, index) => this.totalsOf(days[index] as string, fields));
  }

  /** A day's hash as totals; a field or count that does not parse is left out, and logged. */
  private totalsOf(day: string, fields: Record<string, string>): UsageTotal[] {
    const totals = new Map<string, UsageTotal>();
    let skipped = 0;
    for (const [field, value] of Object.entries(fields)) {
      const name = usageFieldSchema.safeParse(field);
      const count = storedCountSchema.safeParse(value);
      if (!name.success || !count.success) {
        skipped += 1;
        continue;
      }
      const [account, workspace, mode, kind] = name.data;
      const id = totalField({ account, workspace, mode });
      const total = totals.get(id) ?? { day, account, workspace, mode, ...NO_USAGE };
      total[COUNTS[kind]] = count.data;
      totals.set(id, total);
    }
    if (skipped > 0) {
      this.logger.warn({ record: `usage of ${day}`, skipped }, "stored usage fields do not parse: left out of the totals");
    }
    return [...totals.values()];
  }
}
