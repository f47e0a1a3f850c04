import type { LimitKind } from "../config/config.js";
import type { CountedRequest } from "./limit-counters.js";

/** A token limit as the headers report it: its limit, what is used, and when that count starts afresh. */
export interface TokenCount {
  limit: number;
  used: number;
  resetMs: number;
}

/** The limits whose headers are sent: requests per minute, and the token limits (`headersOf`). */
type HeaderLimits = Partial<Record<LimitKind, number>>;

/**
 * OpenAI's rate-limit headers: the requests trio with a requests-per-minute limit; the tokens trio
 * for the token limit that binds first (the least left; of equals, the one that resets last), of
 * the per-minute limit and the quotas per day and month. `remaining` is what is left after this
 * request: its place in the window, and the tokens it `reserved` (nothing of a refused one).
 */
export function headersOf(
  limits: HeaderLimits,
  requests: CountedRequest | undefined,
  counts: readonly [LimitKind, TokenCount][],
  reserved: number | null,
): Record<string, string> {
  const refused = reserved === null;
  const headers: Record<string, string> = {};
  if (limits.rpm !== undefined && requests) {
    // A request refused for another limit is taken back out of the window.
    const used = refused && requests.counted ? requests.used - 1 : requests.used;
    headers["x-ratelimit-limit-requests"] = String(limits.rpm);
    headers["x-ratelimit-remaining-requests"] = String(Math.max(0, limits.rpm - used));
    headers["x-ratelimit-reset-requests"] = resetDuration(requests.resetMs);
  }
  const left = (count: TokenCount) => Math.max(0, count.limit - count.used - (reserved ?? 0));
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
