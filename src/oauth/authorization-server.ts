import { createPrivateKey } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { Configuration, JWK, KoaContextWithOIDC } from "oidc-provider";
import { OAUTH_TOKEN_PREFIX } from "../auth/oauth-token-prefix.js";
import type { OAuthSettings } from "../config/config.js";
import type { OAuthStorage } from "./oauth-storage.js";
import { providerAdapter } from "./provider-adapter.js";
import type { SecretBox } from "./secret-box.js";
import { errorPage } from "./consent-page.js";

/** The one scope a grant gives: the workspace's tools, which only read. */
export const WORKSPACE_SCOPE = "workspace";

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

/** What an access token names, once found valid (not expired, not revoked) in the storage. */
export interface FoundAccessToken {
  grantId: string | undefined;
  clientId: string | undefined;
  audience: string | string[] | undefined;
}

/**
 * The authorization server of one origin, on oidc-provider (loaded only when `MCP_OAUTH=on`):
 * its HTTP handler for `/oauth/*`, and what the consent page and the token check need of it.
 */
export interface AuthorizationServer {
  addresses: OAuthAddresses;
  /** Serves a request whose path, past `/oauth`, the library routes (authorize, token, register, revoke, jwks, metadata). */
  handle(request: IncomingMessage, response: ServerResponse): void;
  /** The pending authorization a consent page belongs to (throws when it expired or was finished). */
  interaction(request: IncomingMessage, response: ServerResponse): Promise<PendingAuthorization>;
  /** Ends a pending authorization with a grant (the code goes to the client) or a refusal; answers the browser's redirect. */
  finish(request: IncomingMessage, response: ServerResponse, result: InteractionOutcome): Promise<void>;
  /** Stores a new grant of the workspace scope to a client; its id. */
  grant(accountId: string, clientId: string, offline: boolean): Promise<string>;
  /** An access token, if it is one this server issued and still honours. */
  findAccessToken(token: string): Promise<FoundAccessToken | undefined>;
  /** Whether an error thrown by `interaction` means "no such pending authorization" (expired, finished, no cookie). */
  isSessionError(error: unknown): boolean;
}

/** How a pending authorization ends: a grant the user allowed, or their refusal. */
export type InteractionOutcome = { accountId: string; grantId: string } | { error: string; description: string };

/** A pending authorization, as the consent page shows it. */
export interface PendingAuthorization {
  uid: string;
  clientId: string;
  clientName: string | undefined;
  redirectUri: string;
  /** Whether the client asked for a refresh token (`offline_access`). */
  offline: boolean;
}

/** What `createAuthorizationServer` is built from. */
export interface AuthorizationServerOptions {
  addresses: OAuthAddresses;
  settings: OAuthSettings;
  storage: OAuthStorage;
  box: SecretBox;
  logger: Logger;
  /** Called when a grant is revoked (its sealed key goes with it). */
  onGrantRevoked(grantId: string): void;
  /**
   * How client ID metadata documents are fetched. Unset (production): the library's own fetch,
   * which refuses special-use (private, loopback) addresses, takes 2.5 s at most and 5 KB at most.
   * A test that serves a document on loopback injects one that reaches it, explicitly.
   */
  fetchMetadataDocument?: OAuthFetch | undefined;
}

/** A fetch as the library calls it (the WHATWG signature). */
export type OAuthFetch = (url: string | URL, options: RequestInit & { dispatcher?: unknown }) => Promise<Response>;

/** An Ed25519 signing key derived from the secret: the same on every replica, never stored. */
function signingKey(box: SecretBox): JWK {
  const pkcs8 = Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), box.derive("signing-key")]);
  const jwk = createPrivateKey({ key: pkcs8, format: "der", type: "pkcs8" }).export({ format: "jwk" }) as JWK;
  return { ...jwk, alg: "EdDSA", use: "sig", kid: box.sign("kid").slice(0, 16) };
}

/**
 * Builds the authorization server of one origin on oidc-provider (why that library:
 * docs/mcp-oauth.md#design). Public clients only need register (dynamic client registration, or
 * a client ID metadata document); the code flow requires PKCE S256; every access token is opaque,
 * bound to the one resource `/oauth/mcp` (RFC 8707) and stored hashed; refresh tokens rotate;
 * authorization responses carry `iss` (RFC 9207). Every authorization shows the consent page:
 * no grant is reused silently.
 */
export async function createAuthorizationServer(options: AuthorizationServerOptions): Promise<AuthorizationServer> {
  const { default: Provider, errors } = await import("oidc-provider");
  const { addresses, settings, box } = options;
  const secure = addresses.origin.startsWith("https:");
  const cookie = { httpOnly: true, sameSite: "lax" as const, secure, signed: true };
  const configuration: Configuration = {
    adapter: providerAdapter(
      options.storage,
      () => new errors.InvalidGrant("grant request is invalid"),
      // RFC 6749's temporarily_unavailable, sent as a 503 (the library's own class says 400): the grant
      // store did not answer, which is neither the client's fault nor an error of ours to hide as a 500.
      (cause) => Object.assign(new errors.TemporarilyUnavailable("the grant store does not answer now; try again shortly", { cause }), { status: 503, statusCode: 503, expose: true }),
    ),
    clients: [],
    jwks: { keys: [signingKey(box)] },
    enabledJWA: { idTokenSigningAlgValues: ["EdDSA"] },
    cookies: {
      keys: [box.derive("cookie-keys").toString("base64url")],
      // `__Host-` where it is allowed (https, path /); the interaction cookies are scoped to their paths.
      names: { session: secure ? "__Host-oauth_session" : "oauth_session", interaction: "oauth_interaction", resume: "oauth_resume" },
      long: cookie,
      short: cookie,
    },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      // Only the client a token was issued to may revoke it; another public client's attempt is a quiet no-op (RFC 7009 §2.1).
      revocation: { enabled: true, allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId },
      userinfo: { enabled: false },
      introspection: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      // Client ID metadata documents (draft-02, experimental in the library: pinned with ~): https
      // only, no redirects, 5 KB, 2.5 s, no special-use addresses, cached (30 s to a day, by Cache-Control).
      clientIdMetadataDocument: { enabled: true, ack: "draft-02" },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => addresses.resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== addresses.resource) throw new errors.InvalidTarget(`the only resource here is ${addresses.resource}`);
          return { scope: WORKSPACE_SCOPE, audience: addresses.resource, accessTokenTTL: settings.accessTokenTtlSeconds, accessTokenFormat: "opaque" };
        },
      },
    },
    clientDefaults: {
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      id_token_signed_response_alg: "EdDSA",
    },
    clientAuthMethods: ["none", "client_secret_basic", "client_secret_post"],
    responseTypes: ["code"],
    scopes: ["offline_access", WORKSPACE_SCOPE],
    pkce: { required: () => true },
    routes: { authorization: "/authorize", token: "/token", registration: "/register", revocation: "/revoke", jwks: "/jwks" },
    interactions: { url: (_ctx, interaction) => `/oauth/interaction/${interaction.uid}` },
    // Every authorization asks the user: only the grant the consent page just made is used, never
    // one found in the browser's session for this client.
    loadExistingGrant: async (ctx) => {
      const grantId = ctx.oidc.result?.consent?.grantId;
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed("refresh_token"),
    rotateRefreshToken: () => true,
    expiresWithSession: async () => false,
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
    ttl: {
      AccessToken: settings.accessTokenTtlSeconds,
      AuthorizationCode: 60,
      Interaction: 600,
      Session: 600,
      Grant: settings.refreshTokenTtlSeconds,
      RefreshToken: settings.refreshTokenTtlSeconds,
    },
    discovery: { service_documentation: "https://github.com/workspace-openai-adapter/workspace-openai-adapter/blob/main/docs/mcp-oauth.md" },
    renderError: async (ctx: KoaContextWithOIDC, out) => {
      ctx.type = "html";
      ctx.set("content-security-policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'");
      ctx.body = errorPage("The authorization did not go through", `${out.error}: ${out.error_description ?? ""}`);
    },
  };
  if (options.fetchMetadataDocument) configuration.fetch = options.fetchMetadataDocument as Configuration["fetch"];
  const provider = new Provider(addresses.issuer, configuration);
  // Tokens say what they are (src/auth/oauth-token-prefix.ts): refused as keys on the static-key routes.
  // Each provider has model classes of its own: this changes no other instance.
  for (const Model of [provider.AccessToken, provider.RefreshToken]) {
    const generate = (Model.prototype as unknown as { generateTokenId: (this: unknown) => string }).generateTokenId;
    Object.assign(Model.prototype, {
      generateTokenId(this: unknown) {
        return `${OAUTH_TOKEN_PREFIX}${generate.call(this)}`;
      },
    });
  }
  if (secure) provider.proxy = true;
  provider.on("grant.revoked", (_ctx: unknown, grantId: string) => options.onGrantRevoked(grantId));
  provider.on("server_error", (_ctx: unknown, error: Error) => options.logger.error({ err: error }, "OAuth server error"));
  const callback = provider.callback();
  const host = new URL(addresses.origin).host;
  // Behind PUBLIC_URL (https at a proxy), the library builds its URLs from the public origin.
  const asPublic = (request: IncomingMessage) => {
    if (!secure) return;
    request.headers["x-forwarded-proto"] = "https";
    request.headers["x-forwarded-host"] = host;
  };

  return {
    addresses,
    handle(request, response) {
      asPublic(request);
      void callback(request, response);
    },
    async interaction(request, response) {
      asPublic(request);
      const details = await provider.interactionDetails(request, response);
      const clientId = String(details.params.client_id);
      const client = await provider.Client.find(clientId);
      const scope = typeof details.params.scope === "string" ? details.params.scope.split(" ") : [];
      return {
        uid: details.uid,
        clientId,
        clientName: client?.clientName,
        redirectUri: String(details.params.redirect_uri),
        offline: scope.includes("offline_access"),
      };
    },
    async finish(request, response, result) {
      asPublic(request);
      const outcome = "error" in result
        ? { error: result.error, error_description: result.description }
        : { login: { accountId: result.accountId }, consent: { grantId: result.grantId } };
      await provider.interactionFinished(request, response, outcome, { mergeWithLastSubmission: false });
    },
    async grant(accountId, clientId, offline) {
      const grant = new provider.Grant({ accountId, clientId });
      grant.addResourceScope(addresses.resource, WORKSPACE_SCOPE);
      grant.addOIDCScope(offline ? `offline_access ${WORKSPACE_SCOPE}` : WORKSPACE_SCOPE);
      return grant.save();
    },
    async findAccessToken(token) {
      const found = await provider.AccessToken.find(token);
      if (!found) return undefined;
      return { grantId: found.grantId, clientId: found.clientId, audience: found.aud };
    },
    isSessionError: (error) => error instanceof errors.SessionNotFound || error instanceof errors.InvalidRequest,
  };
}
