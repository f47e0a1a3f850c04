import type { IncomingMessage } from "node:http";
import { credentialHash } from "./credential-hash.js";
import { AuthenticationError, InvalidRequestError, PermissionDeniedError } from "../errors/adapter-error.js";
import { type Account, bareAccount, gatewayAccount, gatewayPrincipal, namedAccount, namedPrincipal, unnamedGatewayAccount } from "./account.js";
import { bearerCredential } from "./bearer-credential.js";
import type { KeyRing, ListedKey } from "./key-ring.js";
import { OAUTH_TOKEN_PREFIX } from "./oauth-token-prefix.js";

/** A client's key: the bearer credential, unless it is one of the adapter's OAuth tokens (never a key, never sent upstream). */
function clientKey(request: IncomingMessage): string {
  const credential = bearerCredential(request);
  if (credential.startsWith(OAUTH_TOKEN_PREFIX)) {
    throw new AuthenticationError("This is an OAuth access token of this adapter: it is accepted at /oauth/mcp only, not as a workspace key");
  }
  return credential;
}

/** Who is calling, as the rest of the adapter needs it. */
export interface Identity {
  /** The credential presented to the upstream. */
  upstreamCredential: string;
  /**
   * Whose conversations, stored responses, limits and quotas these are: the hash of the client's
   * credential, of a named key's name, or of a gateway's identity (docs/governance.md#who-asks).
   */
  principal: string;
  /** A hash of `upstreamCredential`, computed once per request for what is keyed by it (pollers, shared polling). */
  upstreamKey: string;
  /** Who asks, as usage, metrics and the audit trail name them: never a key. */
  account: Account;
  /**
   * Whether `upstreamCredential` stands for others too (the deployment's `WORKSPACE_API_KEY`, a
   * gateway's key, the OAuth team set-up): the workspace cannot tell its callers apart, so the
   * adapter keeps their queries apart itself (docs/governance.md#whose-query-it-is).
   */
  sharedUpstream: boolean;
}

/** How clients are authenticated (docs/architecture/edge.md#credentials). */
export type Authenticator = (request: IncomingMessage) => Identity;

/** What the authenticator is built from. */
export interface AuthenticatorOptions {
  /** The deployment's own workspace key (`WORKSPACE_API_KEY`): presented upstream instead of the client's. */
  workspaceApiKey?: string | undefined;
  /** The listed client and gateway keys; none listed: any credential passes through. */
  keys?: KeyRing | undefined;
  /** `GATEWAY_IDENTITY_HEADERS`, lower-cased, in order of preference. */
  identityHeaders?: readonly string[] | undefined;
}

/** The longest identity a gateway may name (a user id, an email, a team's alias). */
const MAX_IDENTITY = 256;

/**
 * Settles who asks, once per request (docs/governance.md#who-asks). Pass-through (no
 * `WORKSPACE_API_KEY`): the client's bearer credential goes upstream unchanged. Deployment-held:
 * the adapter presents its own key. Where keys are listed (`ADAPTER_API_KEYS`, its file,
 * `GATEWAY_API_KEYS`), a credential not among them is refused; a named key is its name; a gateway's
 * key may name who is behind it in the first of `identityHeaders` it sends (ignored from any other
 * key). Where users bring their own workspace keys, who asks is the key's hash. An admin's or the
 * metrics scraper's key (the ring's reserved keys) is a 403 in every set-up: it is never passed upstream.
 */
export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  const { workspaceApiKey, keys } = options;
  const identityHeaders = options.identityHeaders ?? [];
  const held = workspaceApiKey ? { credential: workspaceApiKey, key: credentialHash(workspaceApiKey) } : undefined;
  if (held && !keys?.listing) throw new Error("a deployment-held workspace key needs listed client keys");
  const hashOf = recentHashes();
  return (request) => {
    const credential = held ? bearerCredential(request) : clientKey(request);
    const hash = hashOf(credential);
    // An admin's or the scraper's key reads; it never answers nor reaches the workspace, listed keys or not.
    if (keys?.isReserved(hash)) {
      throw new PermissionDeniedError(
        "This key reads usage or metrics (ADMIN_API_KEYS, METRICS_API_KEY): it is never used to answer, nor sent to the workspace; use a client key",
        { code: "key_not_for_answers" },
      );
    }
    const listed = keys?.find(hash);
    if (keys?.listing && !listed) throw new AuthenticationError("Invalid API key");
    const upstreamCredential = held?.credential ?? credential;
    const upstreamKey = held?.key ?? hash;
    const who = listed ? listedIdentity(listed, hash, request, identityHeaders) : { principal: hash, account: bareAccount(hash) };
    // A gateway's key is every identity's behind it, whoever this request names.
    const sharedUpstream = held !== undefined || listed?.kind === "gateway";
    return { upstreamCredential, upstreamKey, ...who, sharedUpstream };
  };
}

/** Credentials whose hashes are kept: the callers of the moment, in any deployment. */
const RECENT_CREDENTIALS = 1024;

/**
 * `credentialHash`, remembered for the last {@link RECENT_CREDENTIALS} credentials, since a SHA-256
 * on a busy loop costs ten times a lookup (docs/benchmarks.md#what-shaped-these-numbers). Full, it starts
 * again empty (a flood of made-up keys costs them their hashes, nothing more). It holds only what
 * each request holds already (its credential, sent upstream), and decides nothing: a key refused
 * later is refused by the key ring, which is asked every time.
 */
function recentHashes(): (credential: string) => string {
  const hashes = new Map<string, string>();
  return (credential) => {
    let hash = hashes.get(credential);
    if (hash === undefined) {
      hash = credentialHash(credential);
      if (hashes.size >= RECENT_CREDENTIALS) hashes.clear();
      hashes.set(credential, hash);
    }
    return hash;
  };
}

/** The principal and account of a listed key: its name's, or, for a gateway naming who is behind it, that identity's. */
function listedIdentity(
  listed: ListedKey,
  hash: string,
  request: IncomingMessage,
  identityHeaders: readonly string[],
): Pick<Identity, "principal" | "account"> {
  const kind = listed.kind === "gateway" ? "gateway" : "key";
  const own = listed.name === undefined
    ? { principal: hash, account: kind === "gateway" ? unnamedGatewayAccount(hash) : bareAccount(hash) }
    : { principal: namedPrincipal(kind, listed.name), account: namedAccount(listed.name) };
  if (listed.kind !== "gateway") return own;
  const identity = gatewayIdentity(request, identityHeaders);
  if (identity === undefined) return own;
  return { principal: gatewayPrincipal(own.principal, identity), account: gatewayAccount(own.account, identity) };
}

/**
 * The identity a gateway names in the first of `headers` its request carries, trimmed. One that
 * could not be told apart in a log or a label (control characters, too long) is a 400: a gateway
 * misconfigured, never an identity silently dropped.
 */
function gatewayIdentity(request: IncomingMessage, headers: readonly string[]): string | undefined {
  for (const header of headers) {
    const value = request.headers[header];
    const text = (Array.isArray(value) ? value.join(", ") : value)?.trim();
    if (!text) continue;
    if (text.length > MAX_IDENTITY || !/^[\x20-\x7e]+$/.test(text)) {
      throw new InvalidRequestError(`The gateway identity in '${header}' must be printable ASCII of at most ${MAX_IDENTITY} characters`, { code: "invalid_gateway_identity" });
    }
    return text;
  }
  return undefined;
}
