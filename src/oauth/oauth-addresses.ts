/** The one scope of the resource: the workspace's tools, which only read. The default when a request names no scope. */
export const WORKSPACE_SCOPE = "workspace";

/** The OpenID Connect scopes a grant may also give, when asked for: an ID token, a refresh token. */
export const OIDC_SCOPES = new Set(["openid", "offline_access"]);

/** Where one origin's authorization server and protected resource live. */
export interface OAuthAddresses {
  /** The origin clients and browsers reach the adapter at (`PUBLIC_URL`, or the loopback address). */
  origin: string;
  /** The authorization server's issuer: `<origin>/oauth` (its RFC 8414 metadata at the path-inserted well-known URL). */
  issuer: string;
  /** The protected resource, `<origin>/oauth/mcp`: every access token's audience. */
  resource: string;
  /** Its RFC 9728 metadata, at the path-aware well-known URL. */
  resourceMetadata: string;
}

/** The addresses of the OAuth edge at an origin. */
export function oauthAddresses(origin: string): OAuthAddresses {
  return {
    origin,
    issuer: `${origin}/oauth`,
    resource: `${origin}/oauth/mcp`,
    resourceMetadata: `${origin}/.well-known/oauth-protected-resource/oauth/mcp`,
  };
}

