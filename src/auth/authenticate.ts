import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { credentialHash } from "./credential-hash.js";
import { AuthenticationError } from "../errors/adapter-error.js";
import { bearerCredential } from "./bearer-credential.js";
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
  /** A hash of the client's own credential: scopes conversations and caches without keeping it. */
  principal: string;
  /** A hash of `upstreamCredential`, computed once per request for what is keyed by it (pollers, shared polling). */
  upstreamKey: string;
}

/** How clients are authenticated (docs/architecture.md#credentials). */
export type Authenticator = (request: IncomingMessage) => Identity;

/**
 * Pass-through (the default): the client's bearer credential goes to the upstream unchanged.
 * Deployment-held (`WORKSPACE_API_KEY` set): the adapter presents its own key upstream and accepts
 * only the client keys in `ADAPTER_API_KEYS`, compared in constant time.
 */
export function createAuthenticator(options: { workspaceApiKey?: string; adapterApiKeys?: readonly string[] }): Authenticator {
  if (!options.workspaceApiKey) {
    return (request) => {
      const credential = clientKey(request);
      const principal = credentialHash(credential);
      return { upstreamCredential: credential, principal, upstreamKey: principal };
    };
  }
  const upstreamCredential = options.workspaceApiKey;
  const upstreamKey = credentialHash(upstreamCredential);
  // Comparing fixed-length digests keeps the comparison constant-time whatever the key lengths.
  const accepted = (options.adapterApiKeys ?? []).map((key) => createHash("sha256").update(key).digest());
  return (request) => {
    const credential = bearerCredential(request);
    const presented = createHash("sha256").update(credential).digest();
    let match = false;
    for (const key of accepted) match = timingSafeEqual(key, presented) || match;
    if (!match) throw new AuthenticationError("Invalid API key");
    return { upstreamCredential, principal: credentialHash(credential), upstreamKey };
  };
}
