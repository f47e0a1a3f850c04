import type { LimitKind, LimitValues, RateLimitSettings } from "../config/config.js";
import { RateLimitError } from "../errors/adapter-error.js";
import { groupTag } from "../redis/keys.js";
import type { CountedRequest, LimitCounters, Slot, WindowCount } from "./limit-counters.js";

/** The limits that apply in one workspace (a kind left out is not limited). */
export type WorkspaceLimits = Partial<Record<LimitKind, number>>;

/** What an answer within its key's limits holds until its response ends (`RateLimits.take`). */
export interface TakenLimits {
  /** OpenAI's `x-ratelimit-*` headers for the response. */
  readonly headers: Record<string, string>;
  /** Whether a tokens-per-minute limit applies: the answer's usage must then be counted and charged. */
  readonly countsTokens: boolean;
  /** Charges the answer's tokens (prompt and completion) to the key's tokens per minute. */
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
};

/**
 * The rate limits of the edge (docs/rate-limits.md): per client key (the credential hash) and
 * workspace, requests per minute, answers in flight and tokens per minute, counted by `counters`
 * (in process, or shared through Redis). One admission per answer: every limit that applies is
 * checked at once (one Redis round trip), and a request refused by one limit takes nothing from
 * the others.
 */
export class RateLimits {
  private readonly workspaces: Map<string, WorkspaceLimits | undefined>;
  private readonly defaults: WorkspaceLimits | undefined;

  constructor(
    settings: RateLimitSettings,
    private readonly counters: LimitCounters,
    private readonly events: RateLimitEvents = {},
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
    const [requests, tokens, slot] = await Promise.all([
      rpm === undefined ? undefined : this.counters.countRequest(key, rpm),
      tpm === undefined ? undefined : this.counters.tokensUsed(key, tpm),
      concurrent === undefined ? undefined : this.counters.takeSlot(key, concurrent),
    ]);
    const waits: [LimitKind, number][] = [];
    if (requests && !requests.counted) waits.push(["rpm", requests.resetMs]);
    if (tokens && tpm !== undefined && tokens.used >= tpm) waits.push(["tpm", tokens.resetMs]);
    if (slot === null) waits.push(["concurrent", CONCURRENCY_RETRY_MS]);
    if (waits.length > 0) {
      if (requests?.counted) requests.uncount();
      slot?.release();
      throw this.refusal(workspace, limits, waits, headersOf(limits, requests, tokens, true));
    }
    return taken(key, limits, headersOf(limits, requests, tokens, false), slot ?? undefined, this.counters);
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

function taken(
  key: string,
  limits: WorkspaceLimits,
  headers: Record<string, string>,
  slot: Slot | undefined,
  counters: LimitCounters,
): TakenLimits {
  const { tpm } = limits;
  return {
    headers,
    countsTokens: tpm !== undefined,
    charge: (tokens) => {
      if (tpm !== undefined) counters.chargeTokens(key, tpm, tokens);
    },
    release: () => slot?.release(),
  };
}

/**
 * OpenAI's rate-limit headers: the requests trio with a requests-per-minute limit, the tokens trio
 * with a tokens-per-minute limit. `remaining` is what is left after this request (none when refused).
 */
function headersOf(
  limits: WorkspaceLimits,
  requests: CountedRequest | undefined,
  tokens: WindowCount | undefined,
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
  if (limits.tpm !== undefined && tokens) {
    headers["x-ratelimit-limit-tokens"] = String(limits.tpm);
    headers["x-ratelimit-remaining-tokens"] = String(Math.max(0, limits.tpm - tokens.used));
    headers["x-ratelimit-reset-tokens"] = resetDuration(tokens.resetMs);
  }
  return headers;
}

/** A duration as OpenAI writes its reset headers: `20ms`, `1.5s`, `6m0s`. */
export function resetDuration(ms: number): string {
  const whole = Math.max(0, Math.ceil(ms));
  if (whole < 1000) return `${whole}ms`;
  const seconds = (value: number) => `${Number(value.toFixed(3))}s`;
  if (whole < 60_000) return seconds(whole / 1000);
  const minutes = Math.floor(whole / 60_000);
  return `${minutes}m${seconds((whole - minutes * 60_000) / 1000)}`;
}
