import type { Cluster, Redis } from "ioredis";
import type { Logger } from "pino";
import type { RedisKeys } from "../redis/keys.js";
import { storedCountSchema } from "../redis/stored-count.js";
import type { QuotaCheck, QuotaLimit } from "./quota-counts.js";
import type { QuotaPeriod } from "./quota-periods.js";

// A count the adapter wrote is decimal digits (`storedCountSchema`); anything else counts as nothing
// and is written over, never trusted.
const COUNT_OF = `local function countOf(value)
  if value and #value <= 15 and string.match(value, '^%d+$') then return tonumber(value) end
  return 0
end`;

// KEYS: the quota counts, then the reservation's record. ARGV: the tokens, the record's lifetime
// (ms), then per count its limit and lifetime (ms). All or nothing: the tokens go to every count
// when they fit under each (none reached, none passed: quota-counts.ts `fitsQuotas`). A record that
// exists already is this command sent again: nothing more is taken. Replies the flag, then each
// count as it was ('' for none).
const RESERVE_QUOTAS = `${COUNT_OF}
local record = KEYS[#KEYS]
local tokens = tonumber(ARGV[1])
local values = redis.call('MGET', unpack(KEYS, 1, #KEYS - 1))
local fits = true
for index = 1, #KEYS - 1 do
  local value = values[index] or ''
  values[index] = value
  local used, limit = countOf(value), tonumber(ARGV[1 + 2 * index])
  if used >= limit or used + tokens > limit then fits = false end
end
if redis.call('EXISTS', record) == 1 then return {1, unpack(values)} end
if not fits then return {0, unpack(values)} end
for index = 1, #KEYS - 1 do
  if values[index] ~= '' and countOf(values[index]) == 0 and values[index] ~= '0' then
    redis.call('SET', KEYS[index], tokens)
  else
    redis.call('INCRBY', KEYS[index], tokens)
  end
  redis.call('PEXPIRE', KEYS[index], ARGV[2 + 2 * index])
end
redis.call('SET', record, tokens, 'PX', ARGV[2])
return {1, unpack(values)}`;

// KEYS[1]: the reservation's record, then every count it touches. ARGV: the tokens charged,
// whether to charge them when there is no record ('1': the reservation was taken in process, Redis
// being away), then per count: whether it is charged the tokens ('1': a period the answer ends in),
// whether the reservation was taken in it ('1'), and its lifetime (ms). Once: the record is deleted
// as it is settled, so the same command sent again (or a second replica settling it) finds none and
// changes nothing. Each count changes once, by the tokens charged less what the record held (the
// usual case, an answer that ends in the periods it began in); one that does not parse is written over.
const SETTLE_QUOTAS = `local held = redis.call('GET', KEYS[1])
if not held and ARGV[2] ~= '1' then return 0 end
local back = 0
if held then
  redis.call('DEL', KEYS[1])
  back = tonumber(held) or 0
end
local tokens = tonumber(ARGV[1])
for index = 2, #KEYS do
  local at = 3 * (index - 1)
  local change = 0
  if ARGV[at] == '1' then change = change + tokens end
  if ARGV[at + 1] == '1' then change = change - back end
  if change ~= 0 then
    local counted = redis.pcall('INCRBY', KEYS[index], change)
    if type(counted) == 'table' and counted.err then redis.call('SET', KEYS[index], math.max(change, 0)) end
  end
  if ARGV[at] == '1' then redis.call('PEXPIRE', KEYS[index], ARGV[at + 2]) end
end
return 1`;

/** How long a quota's count (and a reservation's record) outlives its period: the replicas' clocks may differ a little. */
const QUOTA_GRACE_MS = 24 * 3600_000;

interface QuotaCommands {
  adapterReserveQuotas(...keysThenArguments: (string | number)[]): Promise<(number | string)[]>;
  adapterSettleQuotas(...keysThenArguments: (string | number)[]): Promise<number>;
}

/**
 * The token quotas in the Redis the replicas share (docs/rate-limits.md#quotas): a count per key
 * and period (`RedisKeys.limitQuota`), and a record per reservation held (`RedisKeys.limitHeld`,
 * deleted as it is settled) that makes a reservation and its settlement each apply once however
 * often their command is sent. A
 * key's counts and records share its hash tag, so each script stays in one cluster slot.
 */
export class RedisQuotaCounts {
  private readonly redis: Redis & QuotaCommands;

  constructor(
    redis: Redis | Cluster,
    private readonly keys: RedisKeys,
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {
    const commands = redis as Redis & QuotaCommands;
    commands.defineCommand("adapterReserveQuotas", { lua: RESERVE_QUOTAS });
    commands.defineCommand("adapterSettleQuotas", { lua: SETTLE_QUOTAS });
    this.redis = commands;
  }

  /** The counts of `key` in `periods`. */
  async used(key: string, periods: readonly QuotaPeriod[]): Promise<number[]> {
    const names = periods.map((period) => this.keys.limitQuota(key, period.id));
    return this.countsOf(names, await this.redis.mget(...names));
  }

  /** Reserves `tokens` in every period of `quotas` when they fit under each, as reservation `id`. */
  async reserve(key: string, id: string, quotas: readonly QuotaLimit[], tokens: number): Promise<QuotaCheck> {
    const now = this.now();
    const names = quotas.map((quota) => this.keys.limitQuota(key, quota.period.id));
    const lifetimes = quotas.map((quota) => this.lifetime(quota.period, now));
    const perCount = quotas.flatMap((quota, index) => [quota.limit, lifetimes[index] as number]);
    const record = this.keys.limitHeld(key, id);
    const keys = [...names, record];
    const recordLifetime = Math.max(...lifetimes);
    const reply = await this.redis.adapterReserveQuotas(keys.length, ...keys, Math.ceil(tokens), recordLifetime, ...perCount);
    const [flag, ...values] = reply;
    return { reserved: Number(flag) === 1, used: this.countsOf(names, values.map((value) => (value === "" ? null : String(value)))) };
  }

  /**
   * Settles reservation `id`, taken in `reservedIn`, once: gives back what its record holds and
   * charges `tokens` to `periods`. Without a record it was settled already, unless it was taken in
   * process (`takenHere`: Redis was away), whose tokens are charged here all the same.
   */
  async settle(
    key: string,
    id: string,
    reservedIn: readonly QuotaPeriod[],
    tokens: number,
    periods: readonly QuotaPeriod[],
    takenHere = false,
  ): Promise<void> {
    const now = this.now();
    const charged = new Set(periods.map((period) => period.id));
    const taken = new Set(reservedIn.map((period) => period.id));
    const touched = [...periods, ...reservedIn.filter((period) => !charged.has(period.id))];
    const perCount = touched.flatMap((period) => [charged.has(period.id) ? "1" : "0", taken.has(period.id) ? "1" : "0", this.lifetime(period, now)]);
    const keys = [this.keys.limitHeld(key, id), ...touched.map((period) => this.keys.limitQuota(key, period.id))];
    await this.redis.adapterSettleQuotas(keys.length, ...keys, Math.ceil(tokens), takenHere ? "1" : "0", ...perCount);
  }

  /** How long a count of `period` is kept from `now`: a day past the period's end. */
  private lifetime(period: QuotaPeriod, now: number): number {
    return Math.max(1, period.endsAt - now) + QUOTA_GRACE_MS;
  }

  /** Quota counts as read back: none yet is 0; one that does not parse counts as nothing (never a refusal on a value the adapter did not write), and is logged. */
  private countsOf(names: readonly string[], values: readonly (string | null)[]): number[] {
    return values.map((value, index) => {
      if (value === null) return 0;
      const count = storedCountSchema.safeParse(value);
      if (count.success) return count.data;
      this.logger.warn({ record: names[index] }, "a stored quota count does not parse: counted as nothing");
      return 0;
    });
  }
}
