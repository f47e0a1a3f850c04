import type { LimitCounters } from "../limits/limit-counters.js";
import type { Clock } from "../util/clock.js";
import type { OAuthFetch } from "./metadata-fetch.js";

/** At most this many redirect URIs a client may register (or its metadata document list). */
export const MAX_REDIRECT_URIS = 10;
/** The longest `client_name` accepted. */
export const MAX_CLIENT_NAME = 100;
/** The largest registration request body (JSON), in bytes. */
export const MAX_REGISTRATION_BYTES = 8 * 1024;

const LOOPBACK_REDIRECT_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** Whether a redirect URI goes back to the user's own machine (http allowed there, and warned about at consent). */
export function isLoopbackRedirect(uri: string): boolean {
  const parsed = URL.parse(uri);
  return parsed !== null && LOOPBACK_REDIRECT_HOSTS.has(parsed.hostname.toLowerCase());
}

/**
 * What a client's metadata may be, registered or read from its metadata document alike
 * (docs/mcp-oauth.md#what-a-client-may-register): public clients only (`none`), at most 10
 * redirect URIs, none of them plain http outside loopback (the MCP specification's rule), a name
 * of at most 100 characters, and no `sector_identifier_uri` (which would make the server fetch
 * another URL). The problem, or undefined.
 */
export function clientMetadataProblem(metadata: Record<string, unknown>): { redirect: boolean; message: string } | undefined {
  const uris = Array.isArray(metadata.redirect_uris) ? (metadata.redirect_uris as unknown[]) : [];
  if (uris.length > MAX_REDIRECT_URIS) return { redirect: true, message: `at most ${MAX_REDIRECT_URIS} redirect_uris` };
  for (const uri of uris) {
    const parsed = typeof uri === "string" ? URL.parse(uri) : null;
    if (parsed?.protocol === "http:" && !isLoopbackRedirect(uri as string)) {
      return { redirect: true, message: "redirect_uris must be https, or http on a loopback address (127.0.0.1, [::1], localhost)" };
    }
  }
  if (typeof metadata.client_name === "string" && [...metadata.client_name].length > MAX_CLIENT_NAME) {
    return { redirect: false, message: `client_name must be at most ${MAX_CLIENT_NAME} characters` };
  }
  if (metadata.sector_identifier_uri !== undefined) return { redirect: false, message: "sector_identifier_uri is not supported" };
  const method = metadata.token_endpoint_auth_method;
  if (method !== undefined && method !== "none") return { redirect: false, message: "only public clients (token_endpoint_auth_method none) may register here" };
  return undefined;
}

/** What the metadata-document policy is built from. */
export interface MetadataDocumentPolicyOptions {
  /** Hosts whose documents are fetched (lower case); `*`: any host (still never a special-use address). */
  hosts: readonly string[];
  fetch: OAuthFetch;
  /** Fetches per host per minute, counted here. */
  perHost: { counters: LimitCounters; limit: number };
  clock: Clock;
  /** How long a failed document is not fetched again. */
  failureSeconds?: number;
  /** Failed documents remembered at most. */
  maxFailures?: number;
}

/**
 * Which client ID metadata documents are fetched, and how often: only from the allowed hosts
 * (the well-known clients' by default), at most so many fetches per host per minute, and a
 * document that failed is not fetched again for a minute. Documents from the allowed hosts are
 * the "verified" clients the consent page names, and the only ones whose errors before consent
 * may go back to them.
 */
export function metadataDocumentPolicy(options: MetadataDocumentPolicyOptions) {
  const failures = new Map<string, number>();
  const failureMs = (options.failureSeconds ?? 60) * 1000;
  const maxFailures = options.maxFailures ?? 1000;
  const hostAllowed = (host: string) => options.hosts.includes("*") || options.hosts.includes(host.toLowerCase());
  const remember = (url: string) => {
    failures.delete(url);
    if (failures.size >= maxFailures) failures.delete(failures.keys().next().value as string);
    failures.set(url, options.clock.now() + failureMs);
  };
  return {
    /** Whether a client id is a document from an allowed host (the consent page's "verified"). */
    verified(clientId: string): boolean {
      const url = URL.parse(clientId);
      return url !== null && url.protocol === "https:" && !options.hosts.includes("*") && hostAllowed(url.hostname);
    },
    /** The library's `allowFetch`: allowed host, no recent failure, the host's minute not full. */
    async allowFetch(clientId: string): Promise<boolean> {
      const url = URL.parse(clientId);
      if (!url || !hostAllowed(url.hostname)) return false;
      const until = failures.get(clientId);
      if (until !== undefined && until > options.clock.now()) return false;
      const counted = await options.perHost.counters.countRequest(`{metadata-host:${url.hostname.toLowerCase()}}`, options.perHost.limit);
      return counted.counted;
    },
    /** The fetch given to the library: failures (no answer, not 200) remembered. */
    fetch: (async (url, init) => {
      const key = String(url);
      try {
        const response = await options.fetch(url, init);
        if (response.status !== 200) remember(key);
        return response;
      } catch (error) {
        remember(key);
        throw error;
      }
    }) as OAuthFetch,
  };
}

/** The policy's type, as the authorization server holds it. */
export type MetadataDocumentPolicy = ReturnType<typeof metadataDocumentPolicy>;
