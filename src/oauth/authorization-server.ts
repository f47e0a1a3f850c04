import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { Configuration, errors as OidcErrors, KoaContextWithOIDC } from "oidc-provider";
import { OAUTH_TOKEN_PREFIX } from "../auth/oauth-token-prefix.js";
import type { OAuthSettings } from "../config/config.js";
import type { CountedRequest } from "../limits/limit-counters.js";
import { clientMetadataProblem, MAX_REGISTRATION_BYTES, type MetadataDocumentPolicy } from "./client-policy.js";
import { errorPage } from "./consent-page.js";
import { type OAuthAddresses, OIDC_SCOPES, WORKSPACE_SCOPE } from "./oauth-addresses.js";
import type { OAuthStorage } from "./oauth-storage.js";
import { deleteGrantRecords, providerAdapter } from "./provider-adapter.js";
import type { SecretBox } from "./secret-box.js";
import { signingKeys } from "./signing-keys.js";

/** What an access token names, once found valid (not expired, not revoked) in the storage. */
export interface FoundAccessToken {
  grantId: string | undefined;
  clientId: string | undefined;
  audience: string | string[] | undefined;
  /** The scopes the token carries (space-separated). */
  scope: string | undefined;
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
  /** Stores a new grant to a client: the workspace scope, and the OpenID Connect scopes it asked for; its id. */
  grant(accountId: string, clientId: string, scopes: readonly string[]): Promise<string>;
  /** An access token, if it is one this server issued and still honours. */
  findAccessToken(token: string): Promise<FoundAccessToken | undefined>;
  /** Ends a grant: its records, the grant itself and its sealed key. */
  revokeGrant(grantId: string): Promise<void>;
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
  /** The scopes asked for (the default scope when the request named none). */
  scopes: string[];
  /** Whether the client identified itself by a metadata document from an allowed host. */
  verified: boolean;
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
  /** Which client ID metadata documents are fetched, with which fetch. */
  metadataDocuments: MetadataDocumentPolicy;
  /** Counts a registration, or an authorization request, for the request's client address. */
  countRegistration(request: IncomingMessage): Promise<CountedRequest>;
  countAuthorization(request: IncomingMessage): Promise<CountedRequest>;
}

/** An error the library sends as itself: status, RFC 6749 code, description, and a `Retry-After`. */
function tooMany(errors: typeof OidcErrors, ctx: KoaContextWithOIDC, count: CountedRequest, what: string): Error {
  const seconds = Math.max(1, Math.ceil(count.resetMs / 1000));
  ctx.set("retry-after", String(seconds));
  const error = new errors.CustomOIDCProviderError("too_many_requests", `Too many ${what} from this address; try again in ${seconds} seconds`);
  return Object.assign(error, { status: 429, statusCode: 429, expose: true });
}

/**
 * Builds the authorization server of one origin on oidc-provider (why that library:
 * docs/mcp-oauth.md#design). Public clients only register (dynamic client registration, counted
 * per address inside the library's own registration step whatever path reached it, or a client ID
 * metadata document from an allowed host); the code flow requires PKCE S256; a request without
 * `scope` gets the workspace scope; every access token is opaque, bound to the one resource
 * `/oauth/mcp` (RFC 8707) and stored hashed; refresh tokens rotate; authorization responses carry
 * `iss` (RFC 9207). Every authorization shows the consent page: no grant is reused silently.
 * Errors before the user decides are shown as a page, never redirected to the client (an open
 * redirector otherwise), except to a verified client.
 */
export async function createAuthorizationServer(options: AuthorizationServerOptions): Promise<AuthorizationServer> {
  const { default: Provider, errors } = await import("oidc-provider");
  const { addresses, settings, box, metadataDocuments } = options;
  const secure = addresses.origin.startsWith("https:");
  const cookie = { httpOnly: true, sameSite: "lax" as const, secure, signed: true };
  let revokeGrant: (grantId: string) => Promise<void> = async () => undefined;
  const configuration: Configuration = {
    adapter: providerAdapter(options.storage, {
      alreadyConsumed: () => new errors.InvalidGrant("grant request is invalid"),
      // RFC 6749's temporarily_unavailable, sent as a 503 (the library's own class says 400): the grant
      // store did not answer, which is neither the client's fault nor an error of ours to hide as a 500.
      unavailable: (cause) => Object.assign(new errors.TemporarilyUnavailable("the grant store does not answer now; try again shortly", { cause }), { status: 503, statusCode: 503, expose: true }),
      revokeGrant: (grantId) => revokeGrant(grantId),
      logger: options.logger,
    }),
    clients: [],
    jwks: { keys: signingKeys(box) },
    enabledJWA: { idTokenSigningAlgValues: ["EdDSA"] },
    cookies: {
      keys: box.deriveAll("cookie-keys").map((key) => key.toString("base64url")),
      // `__Host-` where it is allowed (https, path /); the interaction cookies are scoped to their paths.
      names: { session: secure ? "__Host-oauth_session" : "oauth_session", interaction: "oauth_interaction", resume: "oauth_resume" },
      long: cookie,
      short: cookie,
    },
    features: {
      devInteractions: { enabled: false },
      registration: {
        enabled: true,
        // Called inside the library's registration step, before the client is stored: whatever path
        // reached it (`/REGISTER`, `/register/`), the registration is counted. No registration access
        // token: RFC 7592 management is off (nothing to keep, and no secret to read back).
        issueRegistrationAccessToken: async (ctx) => {
          const counted = await options.countRegistration(ctx.req);
          if (!counted.counted) throw tooMany(errors, ctx, counted, "client registrations");
          if (Buffer.byteLength(JSON.stringify(ctx.oidc.body ?? {})) > MAX_REGISTRATION_BYTES) {
            throw new errors.InvalidClientMetadata(`a registration may be at most ${MAX_REGISTRATION_BYTES} bytes`);
          }
          return false;
        },
      },
      // Only the client a token was issued to may revoke it; another public client's attempt is a quiet no-op (RFC 7009 §2.1).
      revocation: { enabled: true, allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId },
      userinfo: { enabled: false },
      introspection: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      // Client ID metadata documents (draft-02, experimental in the library: pinned with ~): https only,
      // no redirects, 5 KB, 2.5 s, from the allowed hosts, through the adapter's own SSRF-safe fetch.
      clientIdMetadataDocument: { enabled: true, ack: "draft-02", allowFetch: async (_ctx, clientId) => metadataDocuments.allowFetch(clientId) },
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
    // Refused in a registration and in a metadata document alike (src/oauth/client-policy.ts).
    extraClientMetadata: {
      properties: ["client_name"],
      validator: (_ctx, key, _value, metadata) => {
        const problem = key === "client_name" ? clientMetadataProblem(metadata as Record<string, unknown>) : undefined;
        if (!problem) return;
        const Refusal = problem.redirect ? errors.InvalidRedirectUri : errors.InvalidClientMetadata;
        throw new Refusal(problem.message);
      },
    },
    // Runs on every authorization request once it is otherwise valid, before anything is stored: the
    // default scope when none was asked for (RFC 6749 §3.3), and the per-address limit.
    extraParams: {
      scope: async (ctx, value) => {
        if (!value && ctx.oidc.params) ctx.oidc.params.scope = WORKSPACE_SCOPE;
        const counted = await options.countAuthorization(ctx.req);
        if (!counted.counted) throw tooMany(errors, ctx, counted, "authorization requests");
      },
    },
    clientDefaults: {
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      id_token_signed_response_alg: "EdDSA",
    },
    clientAuthMethods: ["none"],
    responseTypes: ["code"],
    scopes: ["openid", "offline_access", WORKSPACE_SCOPE],
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
    // Revoking any token of a grant (an access token too) ends the grant, and its sealed key with it.
    revokeGrantPolicy: () => true,
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
      // prompt=none's errors carry a redirect's 303: shown as a page, they are a 400.
      if (ctx.status >= 300 && ctx.status < 400) ctx.status = 400;
      ctx.type = "html";
      ctx.set("content-security-policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'");
      ctx.body = errorPage("The authorization did not go through", `${out.error}: ${out.error_description ?? ""}`);
    },
    fetch: metadataDocuments.fetch as Configuration["fetch"],
  };
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
  revokeGrant = async (grantId) => {
    await deleteGrantRecords(options.storage, grantId);
    await provider.Grant.adapter.destroy(grantId);
    options.onGrantRevoked(grantId);
  };
  if (secure) provider.proxy = true;
  provider.on("grant.revoked", (_ctx: unknown, grantId: string) => options.onGrantRevoked(grantId));
  provider.on("server_error", (_ctx: unknown, error: Error) => options.logger.error({ err: error }, "OAuth server error"));
  // Emitted before the library decides between a redirect and a page: before consent (the
  // authorization route), an error goes back to a verified client only (RFC 9700 §4.11.2).
  provider.on("authorization.error", (ctx: KoaContextWithOIDC, error: { allow_redirect?: boolean }) => {
    const clientId = ctx.oidc?.client?.clientId;
    if (ctx.oidc?.route === "authorization" && !(clientId && metadataDocuments.verified(clientId))) error.allow_redirect = false;
  });
  // A store that does not answer: the 503 says when to try again.
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.status === 503) ctx.set("retry-after", "5");
  });
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
      const scope = typeof details.params.scope === "string" ? details.params.scope : WORKSPACE_SCOPE;
      return {
        uid: details.uid,
        clientId,
        clientName: client?.clientName,
        redirectUri: String(details.params.redirect_uri),
        scopes: scope.split(" ").filter(Boolean),
        verified: metadataDocuments.verified(clientId),
      };
    },
    async finish(request, response, result) {
      asPublic(request);
      const outcome = "error" in result
        ? { error: result.error, error_description: result.description }
        : { login: { accountId: result.accountId }, consent: { grantId: result.grantId } };
      await provider.interactionFinished(request, response, outcome, { mergeWithLastSubmission: false });
    },
    async grant(accountId, clientId, scopes) {
      const grant = new provider.Grant({ accountId, clientId });
      grant.addResourceScope(addresses.resource, WORKSPACE_SCOPE);
      // Whatever was asked of the server's own scopes (the library asks consent again for any one left out).
      grant.addOIDCScope([...new Set([WORKSPACE_SCOPE, ...scopes.filter((scope) => OIDC_SCOPES.has(scope))])].join(" "));
      return grant.save();
    },
    async findAccessToken(token) {
      const found = await provider.AccessToken.find(token);
      if (!found) return undefined;
      return { grantId: found.grantId, clientId: found.clientId, audience: found.aud, scope: found.scope };
    },
    revokeGrant: (grantId) => revokeGrant(grantId),
    isSessionError: (error) => error instanceof errors.SessionNotFound || error instanceof errors.InvalidRequest,
  };
}
