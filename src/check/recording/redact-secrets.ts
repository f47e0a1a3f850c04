// Credentials out of everything `check` prints or records (docs/check.md#recordings): a URL's
// userinfo and query string, and every secret value wherever it turns up (an error echoing a
// header, a token inside a URL). Structural removal (the `Authorization` header, the realtime
// `token` fields) happens where those are read; this is the net behind it.

/** Secrets shorter than this are removed where they stand (headers, token fields), not searched for in all text: a short one would match ordinary words. */
const SHORTEST_SEARCHED = 6;

/** What replaces a secret found in text. */
export const REDACTED = "[redacted]";

/** A URL as it may be shown or recorded: without userinfo and query string (either may carry a credential). */
export function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    parsed.search = "";
    parsed.hash = "";
    return parsed.toString();
  } catch {
    return "(not a URL)";
  }
}

/** The userinfo of a URL, decoded, as secrets to keep out of any output. */
export function userinfoSecrets(url: string): string[] {
  try {
    const parsed = new URL(url);
    return [parsed.username, parsed.password].map((part) => decodeURIComponent(part)).filter(Boolean);
  } catch {
    return [];
  }
}

/** A set of secret values, growing as the run meets them (tokens arrive in create answers). */
export class Secrets {
  private readonly values = new Set<string>();

  constructor(initial: Iterable<string> = []) {
    for (const value of initial) this.add(value);
  }

  /** Adds a value to keep out of output (empty ones are ignored). */
  add(value: string | null | undefined): void {
    if (value) this.values.add(value);
  }

  /** Replaces every known secret (long enough to search for) in `text`. */
  scrub(text: string): string {
    let result = text;
    for (const value of this.values) {
      if (value.length >= SHORTEST_SEARCHED && result.includes(value)) result = result.replaceAll(value, REDACTED);
    }
    return result;
  }

  /** `scrub` over every string of a JSON value (keys and structure kept). */
  scrubJson(value: unknown): unknown {
    if (typeof value === "string") return this.scrub(value);
    if (Array.isArray(value)) return value.map((item) => this.scrubJson(item));
    if (typeof value === "object" && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, this.scrubJson(item)]));
    }
    return value;
  }
}

/** Keys of the interface (and of the realtime protocol's commands) whose values are tokens. */
const TOKEN_KEYS = new Set(["token", "subscription_token"]);

/**
 * A JSON value with its tokens replaced by labels (`<token>`, `<subscription-token>`) and its
 * `ws_url`s shown without query string or userinfo; every value taken out is added to `secrets`,
 * so that a copy of it anywhere else is scrubbed too.
 */
export function withoutTokens(value: unknown, secrets: Secrets): unknown {
  if (Array.isArray(value)) return value.map((item) => withoutTokens(item, secrets));
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => {
      if (TOKEN_KEYS.has(key) && typeof item === "string") {
        secrets.add(item);
        return [key, key === "token" ? "<token>" : "<subscription-token>"];
      }
      if (key === "ws_url" && typeof item === "string") {
        for (const part of userinfoSecrets(item)) secrets.add(part);
        for (const part of queryValues(item)) secrets.add(part);
        return [key, shownUrl(item)];
      }
      return [key, withoutTokens(item, secrets)];
    }),
  );
}

/** The values of a URL's query string: a `ws_url` may carry its token there. */
function queryValues(url: string): string[] {
  try {
    return [...new URL(url).searchParams.values()];
  } catch {
    return [];
  }
}
