import type { IncomingMessage } from "node:http";
import type { BlockList } from "node:net";
import type { CountedRequest, LimitCounters } from "../limits/limit-counters.js";
import { clientAddress } from "./client-address.js";

/** The window of dynamic client registrations per client address. */
export const REGISTRATION_WINDOW_SECONDS = 3600;
/** The window of wrong workspace keys at the consent page per client address. */
export const KEY_FAILURE_WINDOW_SECONDS = 15 * 60;
/** The window of authorization requests (and of metadata-document fetches per host). */
export const MINUTE_SECONDS = 60;
/** Everyone together may pass an address's limit this many times before the ceiling's metric counts. */
export const CEILING_FACTOR = 50;
/** Metadata-document fetches per host per minute. */
export const METADATA_FETCHES_PER_HOST = 10;

/**
 * The limits on OAuth attempts (docs/mcp-oauth.md#limits), counted by the rate limits' counters
 * (in process, or in Redis so that replicas share them), one set per window length. Refusals are
 * per client address (and, for keys, per authorization); what every address does together only
 * raises a metric past a ceiling (`onCeiling`), so that nobody can lock everyone out.
 */
export interface OAuthAttemptLimits {
  /** The counters of windows of this length. */
  counters(windowSeconds: number): LimitCounters;
  /** The limits (from the settings) and the proxies whose `X-Forwarded-For` is believed. */
  registrationsPerHour: number;
  keyFailuresPer15Minutes: number;
  authorizationsPerMinute: number;
  trustedProxies: BlockList | undefined;
  /** Everyone together passed a ceiling: `kind` is `registrations`, `key_failures` or `authorizations`. */
  onCeiling(kind: string): void;
}

/** Several counts taken as one: counted only when every refusing one was, taken back together. */
function together(refusing: CountedRequest[]): CountedRequest {
  const full = refusing.find((count) => !count.counted);
  const uncount = () => {
    for (const count of refusing) count.uncount();
  };
  if (full) {
    uncount();
    return { ...full, counted: false, uncount: () => undefined };
  }
  const first = refusing[0] as CountedRequest;
  return { ...first, counted: true, uncount };
}

/** The everyone-together count of a kind: never refuses, calls `onCeiling` once past it. */
async function ceiling(limits: OAuthAttemptLimits, windowSeconds: number, kind: string, limit: number): Promise<CountedRequest> {
  const counted = await limits.counters(windowSeconds).countRequest(`{all:${kind}}`, limit * CEILING_FACTOR);
  if (!counted.counted) limits.onCeiling(kind);
  return { ...counted, counted: true };
}

/** One attempt of a kind counted for the request's client address in a window, and for everyone together. */
async function countForAddress(
  limits: OAuthAttemptLimits,
  request: IncomingMessage,
  kind: "register" | "authorize",
  windowSeconds: number,
  limit: number,
): Promise<CountedRequest> {
  const address = clientAddress(request, limits.trustedProxies);
  const [own] = await Promise.all([
    limits.counters(windowSeconds).countRequest(kind === "register" ? `{register:${address}}` : `{authorize:${address}}`, limit),
    ceiling(limits, windowSeconds, kind === "register" ? "registrations" : "authorizations", limit),
  ]);
  return own;
}

/** One registration counted for the request's client address (refused when the hour's window is full). */
export function countRegistration(limits: OAuthAttemptLimits, request: IncomingMessage): Promise<CountedRequest> {
  return countForAddress(limits, request, "register", REGISTRATION_WINDOW_SECONDS, limits.registrationsPerHour);
}

/** One authorization request counted for the request's client address (each stores a pending authorization). */
export function countAuthorization(limits: OAuthAttemptLimits, request: IncomingMessage): Promise<CountedRequest> {
  return countForAddress(limits, request, "authorize", MINUTE_SECONDS, limits.authorizationsPerMinute);
}

/**
 * One key tried at consent, counted before it is checked (so that parallel guesses cannot pass the
 * limit) for the client address and for the authorization (refused when either is full), and for
 * the client and everyone together (a metric only: one client id, claude.ai's, is shared by all its
 * users). The caller takes it back (`uncount`) unless the workspace refused the key: only wrong
 * keys stay counted.
 */
export async function countKeyTry(
  limits: OAuthAttemptLimits,
  request: IncomingMessage,
  uid: string,
  clientId: string,
): Promise<CountedRequest> {
  const counters = limits.counters(KEY_FAILURE_WINDOW_SECONDS);
  const limit = limits.keyFailuresPer15Minutes;
  const address = clientAddress(request, limits.trustedProxies);
  const [byAddress, byInteraction, byClient, all] = await Promise.all([
    counters.countRequest(`{consent:${address}}`, limit),
    counters.countRequest(`{consent-interaction:${uid}}`, limit),
    counters.countRequest(`{consent-client:${clientId}}`, limit * CEILING_FACTOR),
    ceiling(limits, KEY_FAILURE_WINDOW_SECONDS, "key_failures", limit),
  ]);
  if (!byClient.counted) limits.onCeiling("key_failures_of_one_client");
  const counted = together([byAddress, byInteraction]);
  const uncount = counted.uncount;
  return { ...counted, uncount: () => [uncount, byClient.uncount, all.uncount].forEach((take) => take()) };
}

/** Whole seconds until a window ends (at least 1): the `Retry-After` of a refusal. */
export function retryAfterSeconds(count: CountedRequest): number {
  return Math.max(1, Math.ceil(count.resetMs / 1000));
}
