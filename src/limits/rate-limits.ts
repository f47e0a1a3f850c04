import type { LimitKind, LimitValues, RateLimitSettings } from "../config/config.js";
import { RateLimitError } from "../errors/adapter-error.js";
import { groupTag } from "../redis/keys.js";
import type { CountedRequest, LimitCounters, Slot } from "./limit-counters.js";
import { type QuotaPeriod, quotaPeriod } from "./quota-periods.js";

/** The limits that apply in one workspace (a kind left out is not limited). */
export type WorkspaceLimits = Partial<Record<LimitKind, number>>;

/** What an answer within its key's limits holds until its response ends (`RateLimits.take`). */
export interface TakenLimits {
  /** OpenAI's `x-ratelimit-*` headers for the response. */
  readonly headers: Record<string, string>;
  /** Whether a token limit (per minute, day or month) applies: the answer's usage must then be counted and charged. */
  readonly countsTokens: boolean;
  /** Charges the answer's tokens (prompt and completion) to the key's tokens per minute, day and month. */
  charge(tokens: number): void;
  /** Frees the answer's concurrency slot; later calls do nothing. */
  release(): void;
}

/** What the limits report, for metrics. */
export interface RateLimitEvents {
  /** A request was refused; `kind` is the limit it must wait for longest. */
  onLimited?: (kind: LimitKind, workspace: string) => void;
}

/** How long a client refused for a concurrency limit is told to wait: slots free when answers end, which nobody can tell in advance. */
const CONCURRENCY_RETRY_MS = 1000;

const NAMES: Record<LimitKind, string> = {
  rpm: "requests per minute (RPM)",
  tpm: "tokens per minute (TPM)",
  concurrent: "answers in flight",
  tpd: "tokens per day (TPD)",
  tpmo: "tokens per month (TPMO)",
};

/** A token limit as the headers report it: its limit, what is used, and when that count starts afresh. */
interface TokenCount {
  limit: number;
  used: number;
  resetMs: number;
}

/**
 * The rate limits of the edge (docs/rate-limits.md): per client key (its principal: the
 * credential's hash, a named key's, a gateway identity's) and workspace, requests per minute,
 * answers in flight, tokens per minute and the token quotas per UTC day and month, counted by
 * `counters` (in process, or shared through Redis). One admission per answer: every limit that
 * applies is checked at once (one Redis round trip), and a request refused by one limit takes
 * nothing from the others. The quotas' periods follow `now`, the adapter's clock.
 */
export class RateLimits {
  private readonly workspaces: Map<string, WorkspaceLimits | undefined>;
  private readonly defaults: WorkspaceLimits | undefined;

  constructor(
    settings: RateLimitSettings,
    private readonly counters: LimitCounters,
    private readonly events: RateLimitEvents = {},
    private readonly now: () => number = Date.now,
  ) {
    this.defaults = applying(settings.defaults);
    this.workspaces = new Map(Object.entries(settings.workspaces).map(([workspace, values]) => [workspace, applying(values)]));
  }

  /** The limits of a workspace, or undefined when none applies there (the request then skips admission). */
  limitsOf(workspace: string): WorkspaceLimits | undefined {
    return this.workspaces.has(workspace) ? this.workspaces.get(workspace) : this.defaults;
  }

  /**
   * Takes one answer's share of the client key `principal`'s limits in `workspace`, or throws a `RateLimitError`
   * (429) with `retry-after`, `retry-after-ms` and the `x-ratelimit-*` headers. The request is
   * counted, and its slot taken, only when every limit admits it.
   */
  async take(principal: string, workspace: string, limits: WorkspaceLimits): Promise<TakenLimits> {
    const key = groupTag(principal, workspace);
    const { rpm, tpm, concurrent } = limits;
    const now = this.now();
    const periods = quotaPeriodsOf(limits, now);
    const [requests, tokens, slot, quotas] = await Promise.all([
      rpm === undefined ? undefined : this.counters.countRequest(key, rpm),
      tpm === undefined ? undefined : this.counters.tokensUsed(key, tpm),
      concurrent === undefined ? undefined : this.counters.takeSlot(key, concurrent),
      periods.length === 0 ? undefined : this.counters.quotaUsed(key, periods),
    ]);
    const counts: [LimitKind, TokenCount][] = [];
    if (tokens && tpm !== undefined) counts.push(["tpm", { limit: tpm, ...tokens }]);
    periods.forEach((period, index) => {
      const limit = limits[period.kind] as number;
      counts.push([period.kind, { limit, used: quotas?.[index] ?? 0, resetMs: period.endsAt - now }]);
    });
    const waits: [LimitKind, number][] = [];
    if (requests && !requests.counted) waits.push(["rpm", requests.resetMs]);
    for (const [kind, count] of counts) if (count.used >= count.limit) waits.push([kind, count.resetMs]);
    if (slot === null) waits.push(["concurrent", CONCURRENCY_RETRY_MS]);
    if (waits.length > 0) {
      if (requests?.counted) requests.uncount();
      slot?.release();
      throw this.refusal(workspace, limits, waits, headersOf(limits, requests, counts, true));
    }
    return taken(key, limits, headersOf(limits, requests, counts, false), slot ?? undefined, this.counters, this.now);
  }

  private refusal(
    workspace: string,
    limits: WorkspaceLimits,
    waits: [LimitKind, number][],
    headers: Record<string, string>,
  ): RateLimitError {
    const [kind, waitMs] = waits.reduce((longest, wait) => (wait[1] > longest[1] ? wait : longest));
    this.events.onLimited?.(kind, workspace);
    const wait = Math.max(1, Math.ceil(waitMs));
    const reached = waits.map(([refused]) => `${NAMES[refused]}: limit ${limits[refused]}`).join("; ");
    return new RateLimitError(
      `Rate limit reached for this key in workspace '${workspace}' on ${reached}. Please try again in ${resetDuration(wait)}.`,
      { headers: { ...headers, "retry-after": String(Math.ceil(wait / 1000)), "retry-after-ms": String(wait) } },
    );
  }
}

/** The limits of `values` that apply (a number), or undefined when none does. */
function applying(values: LimitValues): WorkspaceLimits | undefined {
  const limits: WorkspaceLimits = {};
  for (const [kind, value] of Object.entries(values) as [LimitKind, number | null | undefined][]) if (typeof value === "number") limits[kind] = value;
  return Object.keys(limits).length > 0 ? limits : undefined;
}

/** The quotas of `limits` and the periods `now` falls in. */
function quotaPeriodsOf(limits: WorkspaceLimits, now: number): QuotaPeriod[] {
  const periods: QuotaPeriod[] = [];
  if (limits.tpd !== undefined) periods.push(quotaPeriod("tpd", now));
  if (limits.tpmo !== undefined) periods.push(quotaPeriod("tpmo", now));
  return periods;
}

function taken(
  key: string,
  limits: WorkspaceLimits,
  headers: Record<string, string>,
  slot: Slot | undefined,
  counters: LimitCounters,
  now: () => number,
): TakenLimits {
  const { tpm } = limits;
  return {
    headers,
    countsTokens: tpm !== undefined || limits.tpd !== undefined || limits.tpmo !== undefined,
    charge: (tokens) => {
      if (tpm !== undefined) counters.chargeTokens(key, tpm, tokens);
      // Charged to the periods the answer ends in (an answer that crosses midnight counts for the new day).
      const periods = quotaPeriodsOf(limits, now());
      if (periods.length > 0) counters.chargeQuota(key, periods, tokens);
    },
    release: () => slot?.release(),
  };
}

/**
 * OpenAI's rate-limit headers: the requests trio with a requests-per-minute limit; the tokens trio
 * for the token limit that binds first (the least left; of equals, the one that resets last), of
 * the per-minute limit and the quotas per day and month. `remaining` is what is left after this
 * request (none when refused).
 */
function headersOf(
  limits: WorkspaceLimits,
  requests: CountedRequest | undefined,
  counts: readonly [LimitKind, TokenCount][],
  refused: boolean,
): Record<string, string> {
  const headers: Record<string, string> = {};
  if (limits.rpm !== undefined && requests) {
    // A request refused for another limit is taken back out of the window.
    const used = refused && requests.counted ? requests.used - 1 : requests.used;
    headers["x-ratelimit-limit-requests"] = String(limits.rpm);
    headers["x-ratelimit-remaining-requests"] = String(Math.max(0, limits.rpm - used));
    headers["x-ratelimit-reset-requests"] = resetDuration(requests.resetMs);
  }
  const left = (count: TokenCount) => Math.max(0, count.limit - count.used);
  let binding: TokenCount | undefined;
  for (const [, count] of counts) {
    const binds = !binding || left(count) < left(binding) || (left(count) === left(binding) && count.resetMs > binding.resetMs);
    if (binds) binding = count;
  }
  if (binding) {
    headers["x-ratelimit-limit-tokens"] = String(binding.limit);
    headers["x-ratelimit-remaining-tokens"] = String(left(binding));
    headers["x-ratelimit-reset-tokens"] = resetDuration(binding.resetMs);
  }
  return headers;
}

/** A duration as OpenAI writes its reset headers: `20ms`, `1.5s`, `6m0s`, `5h3m2s` (hours past the hour, as Go writes them). */
export function resetDuration(ms: number): string {
  const whole = Math.max(0, Math.ceil(ms));
  if (whole < 1000) return `${whole}ms`;
  const seconds = (value: number) => `${Number(value.toFixed(3))}s`;
  if (whole < 60_000) return seconds(whole / 1000);
  const hours = Math.floor(whole / 3_600_000);
  const minutes = Math.floor((whole - hours * 3_600_000) / 60_000);
  const rest = seconds((whole - hours * 3_600_000 - minutes * 60_000) / 1000);
  return hours > 0 ? `${hours}h${minutes}m${rest}` : `${minutes}m${rest}`;
}
