import type { IncomingMessage, ServerResponse } from "node:http";
import type { CountedRequest, LimitCounters } from "../limits/limit-counters.js";

/** The window of dynamic client registrations per client address. */
export const REGISTRATION_WINDOW_SECONDS = 3600;
/** The window of wrong workspace keys at the consent page per client address. */
export const KEY_FAILURE_WINDOW_SECONDS = 15 * 60;

/**
 * The limits on OAuth attempts per client address (docs/mcp-oauth.md#limits): dynamic client
 * registrations per hour, and workspace keys tried at the consent page per 15 minutes. Counted by
 * the rate limits' counters (in process, or in Redis so that replicas share them), one set per window.
 */
export interface OAuthAttemptLimits {
  registrations: { counters: LimitCounters; limit: number };
  keyFailures: { counters: LimitCounters; limit: number };
}

/**
 * The address a request came from, as the rest of the edge sees it: the socket's peer (the adapter
 * trusts no forwarded header, so behind a proxy every client counts as the proxy's address).
 */
export function clientAddress(request: IncomingMessage): string {
  const address = request.socket.remoteAddress ?? "unknown";
  return address.startsWith("::ffff:") ? address.slice("::ffff:".length) : address;
}

/** One registration counted for the request's address (refused when the hour's window is full). */
export function countRegistration(limits: OAuthAttemptLimits, request: IncomingMessage): Promise<CountedRequest> {
  return limits.registrations.counters.countRequest(`{register:${clientAddress(request)}}`, limits.registrations.limit);
}

/**
 * One key tried at consent, counted for the request's address before it is checked (so that
 * parallel guesses cannot pass the limit); the caller takes it back (`uncount`) unless the
 * workspace refused the key: only wrong keys stay counted.
 */
export function countKeyTry(limits: OAuthAttemptLimits, request: IncomingMessage): Promise<CountedRequest> {
  return limits.keyFailures.counters.countRequest(`{consent:${clientAddress(request)}}`, limits.keyFailures.limit);
}

/** Whole seconds until a window ends (at least 1): the `Retry-After` of a refusal. */
export function retryAfterSeconds(count: CountedRequest): number {
  return Math.max(1, Math.ceil(count.resetMs / 1000));
}

/**
 * The refusal of a registration past the limit, as RFC 7591 §3.2.2 shapes errors (its list of
 * codes is open; `too_many_requests` is the one the MCP SDK's own authorization server sends).
 */
export function refuseRegistration(response: ServerResponse, count: CountedRequest): void {
  const seconds = retryAfterSeconds(count);
  response.statusCode = 429;
  response.setHeader("retry-after", String(seconds));
  response.setHeader("content-type", "application/json; charset=utf-8");
  response.setHeader("cache-control", "no-store");
  response.end(
    JSON.stringify({
      error: "too_many_requests",
      error_description: `Too many client registrations from this address; try again in ${seconds} seconds`,
    }),
  );
}
