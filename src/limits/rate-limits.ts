import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { LimitKind, LimitValues, RateLimitSettings } from "../config/config.js";
import type { Mode } from "../core/modes.js";
import { RateLimitError } from "../errors/adapter-error.js";
import { groupTag } from "../redis/keys.js";
import type { LimitCounters, QuotaReservation, ReservedTokens, Slot } from "./limit-counters.js";
import type { QuotaLimit } from "./quota-counts.js";
import { headersOf, resetDuration, type TokenCount } from "./limit-headers.js";
import { type QuotaPeriod, quotaPeriod } from "./quota-periods.js";

/** The limits that apply in one workspace (a kind left out is not limited). */
export type WorkspaceLimits = Partial<Record<LimitKind, number>>;

/** What an answer is expected to cost before it runs (docs/rate-limits.md#reservations): what admission reserves under a token limit. */
export interface ExpectedCost {
  mode: Mode;
  /** What is asked of the workspace: its tokens are estimated from its UTF-8 size (`expectedTokens`). */
  prompt: string;
  /** How many answers (`n`): each is a query of its own, with the prompt. */
  choices: number;
}

/**
 * A reservation held in a key's quotas, as a background answer's record keeps it: the replica that
 * takes the answer over settles it (`RateLimits.settleHeld`). Read back through this schema.
 */
export const heldReservationSchema = z.object({
  id: z.string().min(1).max(64),
  tokens: z.int().min(0),
  /** When it was taken (milliseconds since the epoch): its quota periods. */
  at: z.int().min(0),
});
/** A reservation held in a key's quotas. */
export type HeldReservation = z.infer<typeof heldReservationSchema>;

/** What an answer within its key's limits holds until its response ends (`RateLimits.take`). */
export interface TakenLimits {
  /** OpenAI's `x-ratelimit-*` headers for the response. */
  readonly headers: Record<string, string>;
  /** Whether a token limit (per minute, day or month) applies: the answer's usage must then be counted and settled. */
  readonly countsTokens: boolean;
  /** The reservation in the key's quotas, for a background answer's record; undefined without a quota. */
  readonly held: HeldReservation | undefined;
  /**
   * Settles the answer's reservation to its tokens (prompt and completion) in the key's tokens per
   * minute, day and month, once: later calls do nothing.
   */
  settle(tokens: number): void;
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

/** UTF-8 bytes per o200k token, about, over prose in the languages the tokenizer serves (English is nearer 4.5, CJK about 3.5). */
const BYTES_PER_TOKEN = 4;

const NAMES: Record<LimitKind, string> = {
  rpm: "requests per minute (RPM)",
  tpm: "tokens per minute (TPM)",
  concurrent: "answers in flight",
  tpd: "tokens per day (TPD)",
  tpmo: "tokens per month (TPMO)",
};

/** The effects the limits use: the adapter's clock (the quotas' periods follow it) and the reservations' ids. */
export interface RateLimitEffects {
  now?: () => number;
  newId?: () => string;
}

/**
 * The rate limits of the edge (docs/rate-limits.md): per client key (its principal: the
 * credential's hash, a named key's, a gateway identity's) and workspace, requests per minute,
 * answers in flight, tokens per minute and the token quotas per UTC day and month, counted by
 * `counters` (in process, or shared through Redis). One admission per answer: every limit that
 * applies is checked at once (one Redis round trip), and a request refused by one limit takes
 * nothing from the others. Under a token limit the answer's expected cost is reserved at
 * admission, and settled to its real count when it ends.
 */
export class RateLimits {
  private readonly workspaces: Map<string, WorkspaceLimits | undefined>;
  private readonly defaults: WorkspaceLimits | undefined;
  private readonly answerTokens: Record<Mode, number>;
  private readonly now: () => number;
  private readonly newId: () => string;

  constructor(
    settings: RateLimitSettings,
    private readonly counters: LimitCounters,
    private readonly events: RateLimitEvents = {},
    effects: RateLimitEffects = {},
  ) {
    this.defaults = applying(settings.defaults);
    this.workspaces = new Map(Object.entries(settings.workspaces).map(([workspace, values]) => [workspace, applying(values)]));
    this.answerTokens = settings.answerTokens;
    this.now = effects.now ?? Date.now;
    this.newId = effects.newId ?? randomUUID;
  }

  /** The limits of a workspace, or undefined when none applies there (the request then skips admission). */
  limitsOf(workspace: string): WorkspaceLimits | undefined {
    return this.workspaces.has(workspace) ? this.workspaces.get(workspace) : this.defaults;
  }

  /**
   * The tokens an answer is expected to cost: per choice, its prompt (estimated from its UTF-8
   * size: counting it exactly would cost a tokenizer pass at admission, and the reservation is
   * settled to the exact count anyway) and what an answer of its mode is expected to produce
   * (`RATE_LIMIT_ANSWER_TOKENS`).
   */
  expectedTokens(cost: ExpectedCost): number {
    const prompt = Math.ceil(Buffer.byteLength(cost.prompt, "utf8") / BYTES_PER_TOKEN);
    return cost.choices * (prompt + this.answerTokens[cost.mode]);
  }

  /**
   * Takes one answer's share of the client key `principal`'s limits in `workspace`, or throws a `RateLimitError`
   * (429) with `retry-after`, `retry-after-ms` and the `x-ratelimit-*` headers. The request is
   * counted, its slot taken and its expected tokens (`cost`) reserved, only when every limit admits it.
   */
  async take(principal: string, workspace: string, limits: WorkspaceLimits, cost?: ExpectedCost): Promise<TakenLimits> {
    const key = groupTag(principal, workspace);
    const { rpm, tpm, concurrent } = limits;
    const now = this.now();
    const quotas = quotaLimitsOf(limits, now);
    const tokens = cost && countsTokens(limits) ? this.expectedTokens(cost) : 0;
    const id = quotas.length > 0 ? this.newId() : "";
    const [requests, window, slot, quota] = await Promise.all([
      rpm === undefined ? undefined : this.counters.countRequest(key, rpm),
      tpm === undefined ? undefined : this.counters.reserveTokens(key, tpm, tokens),
      concurrent === undefined ? undefined : this.counters.takeSlot(key, concurrent),
      quotas.length === 0 ? undefined : this.counters.reserveQuota(key, id, quotas, tokens),
    ]);
    const counts: [LimitKind, TokenCount][] = [];
    if (window && tpm !== undefined) counts.push(["tpm", { limit: tpm, used: window.used, resetMs: window.resetMs }]);
    quotas.forEach(({ period, limit }, index) => {
      counts.push([period.kind, { limit, used: quota?.used[index] ?? 0, resetMs: period.endsAt - now }]);
    });
    const waits: [LimitKind, number][] = [];
    if (requests && !requests.counted) waits.push(["rpm", requests.resetMs]);
    // Each token limit the reservation did not fit under (a quota's script and the window say the same of the counts they return).
    const tokenWaits = counts.filter(([, count]) => count.used >= count.limit || count.used + tokens > count.limit);
    const refusedTokens = window?.reserved === false || quota?.reserved === false;
    if (refusedTokens) {
      for (const [kind, count] of tokenWaits.length > 0 ? tokenWaits : counts) waits.push([kind, count.resetMs]);
    }
    if (slot === null) waits.push(["concurrent", CONCURRENCY_RETRY_MS]);
    if (waits.length > 0) {
      if (requests?.counted) requests.uncount();
      slot?.release();
      window?.adjust(-tokens);
      quota?.settle(0, []);
      throw this.refusal(workspace, limits, waits, counts, tokens, headersOf(limits, requests, counts, null));
    }
    const headers = headersOf(limits, requests, counts, tokens);
    const reservation = { key, tokens, at: now, windowEndsAt: now + (window?.resetMs ?? 0) };
    const held = quota ? { id, tokens, at: now } : undefined;
    return this.taken(limits, headers, reservation, { window, quota, held, slot: slot ?? undefined });
  }

  /**
   * Settles a reservation another replica took (`held`, kept in a background answer's record) to
   * `tokens`, once, when this replica carries the answer on: the quotas only (the minute it was
   * taken in is long gone).
   */
  settleHeld(principal: string, workspace: string, held: HeldReservation, tokens: number): void {
    const limits = this.limitsOf(workspace);
    const periods = limits ? quotaPeriodsOf(limits, this.now()) : [];
    if (!limits || periods.length === 0) return;
    const key = groupTag(principal, workspace);
    const reserved = { id: held.id, periods: quotaPeriodsOf(limits, held.at), tokens: held.tokens };
    this.counters.settleQuota(key, reserved, tokens, periods);
  }

  private taken(
    limits: WorkspaceLimits,
    headers: Record<string, string>,
    reservation: { key: string; tokens: number; windowEndsAt: number },
    holdings: Holdings,
  ): TakenLimits {
    const { tpm } = limits;
    const { window, quota, slot } = holdings;
    let settled = false;
    return {
      headers,
      countsTokens: countsTokens(limits),
      held: holdings.held,
      settle: (tokens) => {
        if (settled) return;
        settled = true;
        const now = this.now();
        // In the minute it was reserved in, the reservation becomes the count; past it, the count is the new minute's.
        if (window && tpm !== undefined) {
          if (now < reservation.windowEndsAt) window.adjust(tokens - reservation.tokens);
          else if (tokens > 0) this.counters.chargeTokens(reservation.key, tpm, tokens);
        }
        // Charged to the periods the answer ends in (an answer that crosses midnight counts for the new day).
        quota?.settle(tokens, quotaPeriodsOf(limits, now));
      },
      release: () => slot?.release(),
    };
  }

  private refusal(
    workspace: string,
    limits: WorkspaceLimits,
    waits: [LimitKind, number][],
    counts: readonly [LimitKind, TokenCount][],
    tokens: number,
    headers: Record<string, string>,
  ): RateLimitError {
    const [kind, waitMs] = waits.reduce((longest, wait) => (wait[1] > longest[1] ? wait : longest));
    this.events.onLimited?.(kind, workspace);
    const wait = Math.max(1, Math.ceil(waitMs));
    const used = new Map(counts);
    // As OpenAI words a token limit: what it is, what is used, what this request asks (and when that is more than the limit holds at all).
    const reached = waits.map(([refused]) => {
      const count = used.get(refused);
      if (!count) return `${NAMES[refused]}: limit ${limits[refused]}`;
      const never = tokens > count.limit ? " (more than the limit holds: a shorter prompt, or fewer choices)" : "";
      return `${NAMES[refused]}: limit ${count.limit}, used ${count.used}, requested ${tokens}${never}`;
    });
    return new RateLimitError(
      `Rate limit reached for this key in workspace '${workspace}' on ${reached.join("; ")}. Please try again in ${resetDuration(wait)}.`,
      { headers: { ...headers, "retry-after": String(Math.ceil(wait / 1000)), "retry-after-ms": String(wait) } },
    );
  }
}

/** What an admitted answer holds of its key's limits until it ends. */
interface Holdings {
  window?: ReservedTokens | undefined;
  quota?: QuotaReservation | undefined;
  held?: HeldReservation | undefined;
  slot?: Slot | undefined;
}

/** Whether a token limit (per minute, day or month) applies. */
function countsTokens(limits: WorkspaceLimits): boolean {
  return limits.tpm !== undefined || limits.tpd !== undefined || limits.tpmo !== undefined;
}

/** The limits of `values` that apply (a number), or undefined when none does. */
function applying(values: LimitValues): WorkspaceLimits | undefined {
  const limits: WorkspaceLimits = {};
  for (const [kind, value] of Object.entries(values) as [LimitKind, number | null | undefined][]) if (typeof value === "number") limits[kind] = value;
  return Object.keys(limits).length > 0 ? limits : undefined;
}

/** The quotas of `limits` and the periods `now` falls in. */
function quotaPeriodsOf(limits: WorkspaceLimits, now: number): QuotaPeriod[] {
  return quotaLimitsOf(limits, now).map((quota) => quota.period);
}

/** The quotas of `limits`, each with the period `now` falls in. */
function quotaLimitsOf(limits: WorkspaceLimits, now: number): QuotaLimit[] {
  const quotas: QuotaLimit[] = [];
  if (limits.tpd !== undefined) quotas.push({ period: quotaPeriod("tpd", now), limit: limits.tpd });
  if (limits.tpmo !== undefined) quotas.push({ period: quotaPeriod("tpmo", now), limit: limits.tpmo });
  return quotas;
}
