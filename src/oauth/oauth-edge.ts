import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { Authenticator, Identity } from "../auth/authenticate.js";
import { oauthAccount } from "../auth/account.js";
import { credentialHash } from "../auth/credential-hash.js";
import type { OAuthSettings } from "../config/config.js";
import { AdapterError, AuthenticationError, NotFoundError, PermissionDeniedError, ServiceUnavailableError } from "../errors/adapter-error.js";
import type { WorkspaceClient } from "../upstream/workspace-client.js";
import type { Clock } from "../util/clock.js";
import { countAuthorization, countRegistration, METADATA_FETCHES_PER_HOST, MINUTE_SECONDS, type OAuthAttemptLimits } from "./attempt-limits.js";
import { type AuthorizationServer, createAuthorizationServer } from "./authorization-server.js";
import { metadataDocumentPolicy } from "./client-policy.js";
import { consentStep } from "./consent.js";
import { GrantKeys } from "./grant-keys.js";
import { IdpSignIn } from "./idp-sign-in.js";
import type { OAuthFetch } from "./metadata-fetch.js";
import { oauthAddresses, WORKSPACE_SCOPE } from "./oauth-addresses.js";
import type { OAuthStorage } from "./oauth-storage.js";
import type { SecretBox } from "./secret-box.js";

/** How often a grant's key is checked again upstream (a rotated key then ends its grants within this long). */
export const KEY_CHECK_INTERVAL_MS = 5 * 60_000;
/** Grants whose last check is remembered at most (per replica). */
const KEY_CHECKS_REMEMBERED = 10_000;

/** What the OAuth edge is built from. */
export interface OAuthEdgeOptions {
  settings: OAuthSettings;
  storage: OAuthStorage;
  box: SecretBox;
  client: Pick<WorkspaceClient, "listWorkspaces">;
  logger: Logger;
  /** The limits on registrations, authorizations and key guesses. */
  attempts: OAuthAttemptLimits;
  /** How client ID metadata documents are fetched (src/oauth/metadata-fetch.ts). */
  metadataFetch: OAuthFetch;
  clock: Clock;
  /** Whether a key typed at the consent page is an admin's or the metrics scraper's (refused there, never sent upstream). */
  reservedKey?: ((key: string) => boolean) | undefined;
}

/** The identity a grant gives, and the one workspace it may use. */
export interface GrantIdentity {
  identity: Identity;
  workspace: string;
}

/**
 * OAuth for MCP (docs/mcp-oauth.md), what the routes of `MCP_OAUTH=on` call: a bearer access
 * token traded for what a static key gives (credential hash, upstream credential, workspace), so
 * that below the edge nothing knows how the caller signed in and the token never goes upstream;
 * the protected resource's metadata (RFC 9728); the consent page; and the authorization server
 * (oidc-provider, loaded on first use) for the rest of `/oauth/*`.
 */
export interface OAuthEdge {
  /** The grant behind a request's bearer token; throws a 401 whose `WWW-Authenticate` starts discovery. */
  admit(request: IncomingMessage): Promise<GrantIdentity>;
  /** The identity `admit` found for a request (what the MCP endpoint authenticates with). */
  authenticate: Authenticator;
  /**
   * The workspace refused the grant's key during a request `admit` let through (a tool call's own
   * upstream 401: the key was rotated since it was last checked): the grant is revoked, and the
   * 401 `invalid_token` returned tells the client to authorize again (docs/mcp-oauth.md).
   */
  keyRejected(request: IncomingMessage): Promise<AdapterError>;
  /** RFC 9728 metadata of `/oauth/mcp` at the request's origin. */
  resourceMetadata(request: IncomingMessage): Record<string, unknown>;
  /** The consent page (GET) of a pending authorization. */
  showConsent(request: IncomingMessage, response: ServerResponse, uid: string): Promise<void>;
  /** The identity provider's redirect back (team set-up). */
  signInCallback(request: IncomingMessage, response: ServerResponse): Promise<void>;
  /** A consent form submitted (POST). */
  submitConsent(request: IncomingMessage, response: ServerResponse, uid: string): Promise<void>;
  /** The authorization server's own routes, `path` being past `/oauth` (`/authorize`, `/token`, `/.well-known/openid-configuration`…). */
  serveLibrary(request: IncomingMessage, response: ServerResponse, path: string): Promise<void>;
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** Builds the OAuth edge (one authorization server per origin, made on first use). */
export function createOAuthEdge(options: OAuthEdgeOptions): OAuthEdge {
  const { settings, storage, box, logger } = options;
  const grants = new GrantKeys(storage, box, settings.refreshTokenTtlSeconds);
  // One authorization server per origin: PUBLIC_URL's, or (without it) each loopback name the adapter is reached by.
  const servers = new Map<string, Promise<{ server: AuthorizationServer; consent: ReturnType<typeof consentStep> }>>();
  const identities = new WeakMap<IncomingMessage, GrantIdentity>();
  /** The grant each admitted request came with (`keyRejected` revokes it). */
  const grantsOf = new WeakMap<IncomingMessage, string>();
  const team = settings.team
    ? {
      key: settings.team.workspaceApiKey,
      signIn: new IdpSignIn(settings.team.idp, box, options.clock),
      issuer: settings.team.idp.issuer,
      allow: settings.team.idp.allow,
    }
    : undefined;
  const metadataDocuments = metadataDocumentPolicy({
    hosts: settings.metadataDocumentHosts,
    fetch: options.metadataFetch,
    perHost: { counters: options.attempts.counters(MINUTE_SECONDS), limit: METADATA_FETCHES_PER_HOST },
    clock: options.clock,
  });
  const keyChecks = new Map<string, number>();

  /** The public origin of a request: PUBLIC_URL, or the loopback address it came to (never a Host header naming another). */
  function originOf(request: IncomingMessage): string {
    if (settings.publicUrl) return settings.publicUrl;
    const host = request.headers.host ?? "";
    const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(host);
    const loopback = match && LOOPBACK.has((match[1] ?? "").toLowerCase()) && Number(match[2] ?? 80) === request.socket.localPort;
    if (!loopback) throw new NotFoundError("OAuth is served at PUBLIC_URL, or on a loopback address (127.0.0.1, localhost) without it");
    return `http://${host.toLowerCase()}`;
  }

  function serverFor(request: IncomingMessage) {
    const origin = originOf(request);
    let found = servers.get(origin);
    if (!found) {
      found = (async () => {
        const server = await createAuthorizationServer({
          addresses: oauthAddresses(origin),
          settings,
          storage,
          box,
          logger,
          metadataDocuments,
          countRegistration: (request) => countRegistration(options.attempts, request),
          countAuthorization: (request) => countAuthorization(options.attempts, request),
          onGrantRevoked: (grantId) => {
            grants.delete(grantId).catch((error: unknown) => logger.warn({ err: error }, "a revoked grant's key was not deleted"));
          },
        });
        const { client, attempts, reservedKey } = options;
        const consent = consentStep(server, { box, grants, client, logger, team, attempts, reservedKey });
        return { server, consent };
      })();
      servers.set(origin, found);
      found.catch(() => servers.delete(origin));
    }
    return found;
  }

  /** The 401 that starts discovery: where the resource's metadata is, and the scope to ask for. */
  function challenge(request: IncomingMessage, problem?: string): AuthenticationError {
    const addresses = oauthAddresses(originOf(request));
    const parts = [`resource_metadata="${addresses.resourceMetadata}"`, `scope="${WORKSPACE_SCOPE}"`];
    if (problem) parts.push("error=\"invalid_token\"", `error_description="${problem}"`);
    return new AuthenticationError(problem ?? "Not authenticated", {
      headers: { "www-authenticate": `Bearer ${parts.join(", ")}` },
      code: problem ? "invalid_token" : "invalid_api_key",
    });
  }

  /** The 403 of a valid token without the workspace scope (MCP's step-up: the client asks for it). */
  function insufficientScope(request: IncomingMessage): PermissionDeniedError {
    const addresses = oauthAddresses(originOf(request));
    const header = `Bearer error="insufficient_scope", scope="${WORKSPACE_SCOPE}", resource_metadata="${addresses.resourceMetadata}", error_description="The access token does not carry the ${WORKSPACE_SCOPE} scope"`;
    return new PermissionDeniedError(`The access token does not carry the ${WORKSPACE_SCOPE} scope`, { headers: { "www-authenticate": header }, code: "insufficient_scope" });
  }

  /** A store outage as the client should see it: a 503 to try again, never a 500. */
  function unavailable(error: unknown): unknown {
    const status = (error as { status?: unknown } | undefined)?.status;
    if (error instanceof AdapterError || status !== 503) return error;
    return new ServiceUnavailableError("The grant store does not answer now; try again shortly", { headers: { "retry-after": "5" }, cause: error });
  }

  /**
   * Whether the grant's key still works upstream, asked at most every few minutes per grant (one
   * cheap workspace listing): a rotated or revoked key ends its grants, and the client is told
   * `invalid_token` so that it asks the user again. An upstream that does not answer changes nothing.
   */
  async function keyStillWorks(grantId: string, key: string): Promise<boolean> {
    const now = options.clock.now();
    const checked = keyChecks.get(grantId);
    if (checked !== undefined && now - checked < KEY_CHECK_INTERVAL_MS) return true;
    try {
      await options.client.listWorkspaces(key, { limit: 1 });
    } catch (error) {
      if (error instanceof AdapterError && (error.status === 401 || error.status === 403)) return false;
      return true;
    }
    keyChecks.delete(grantId);
    if (keyChecks.size >= KEY_CHECKS_REMEMBERED) keyChecks.delete(keyChecks.keys().next().value as string);
    keyChecks.set(grantId, now);
    return true;
  }

  /** The grant behind a valid token, or the 401/403 that tells the client what to do. */
  async function grantOf(request: IncomingMessage, token: string) {
    const { server } = await serverFor(request);
    const found = await server.findAccessToken(token);
    if (!found?.grantId) throw challenge(request, "The access token is not valid (unknown, expired or revoked)");
    const audiences = (Array.isArray(found.audience) ? found.audience : [found.audience]).filter(Boolean);
    const { resource } = server.addresses;
    if (audiences.length === 0) throw insufficientScope(request);
    if (!audiences.includes(resource)) throw challenge(request, `The access token was not issued for ${resource}`);
    if (!(found.scope ?? "").split(" ").includes(WORKSPACE_SCOPE)) throw insufficientScope(request);
    const grant = await grants.get(found.grantId);
    if (!grant) throw challenge(request, "The grant behind this access token was revoked");
    if (!(await keyStillWorks(found.grantId, grant.key))) {
      await server.revokeGrant(found.grantId);
      throw challenge(request, "The workspace no longer accepts the key given at consent: authorize again");
    }
    return { ...grant, grantId: found.grantId };
  }

  return {
    async admit(request) {
      const header = request.headers.authorization ?? "";
      const token = /^Bearer[ \t]+([\x21-\x7e]+)[ \t]*$/i.exec(header)?.[1];
      if (!token) throw challenge(request);
      const grant = await grantOf(request, token).catch((error: unknown) => {
        throw unavailable(error);
      });
      const hash = credentialHash(grant.key);
      const principal = grant.principal ?? hash;
      // The team set-up's grants (a person signed in) all present the deployment's one key.
      const sharedUpstream = grant.principal !== undefined;
      const account = oauthAccount(principal);
      const identity = { upstreamCredential: grant.key, principal, upstreamKey: hash, account, sharedUpstream };
      const admitted = { identity, workspace: grant.workspace };
      identities.set(request, admitted);
      grantsOf.set(request, grant.grantId);
      return admitted;
    },
    async keyRejected(request) {
      const grantId = grantsOf.get(request);
      if (grantId !== undefined) {
        keyChecks.delete(grantId);
        const { server } = await serverFor(request);
        await server.revokeGrant(grantId).catch((error: unknown) => logger.warn({ err: error }, "a grant whose key was refused was not revoked"));
      }
      return challenge(request, "The workspace no longer accepts the key given at consent: authorize again");
    },
    authenticate(request) {
      const found = identities.get(request);
      if (!found) throw new AuthenticationError("Not authenticated");
      return found.identity;
    },
    resourceMetadata(request) {
      const addresses = oauthAddresses(originOf(request));
      return {
        resource: addresses.resource,
        authorization_servers: [addresses.issuer],
        scopes_supported: [WORKSPACE_SCOPE],
        bearer_methods_supported: ["header"],
        resource_name: "Workspace Knowledge Service (MCP tools)",
        resource_documentation: "https://github.com/workspace-openai-adapter/workspace-openai-adapter/blob/main/docs/mcp-oauth.md",
      };
    },
    async showConsent(request, response, uid) {
      await (await serverFor(request)).consent.show(request, response, uid);
    },
    async signInCallback(request, response) {
      await (await serverFor(request)).consent.signInCallback(request, response);
    },
    async submitConsent(request, response, uid) {
      await (await serverFor(request)).consent.submit(request, response, uid);
    },
    async serveLibrary(request, response, path) {
      const { server } = await serverFor(request);
      // The library's mount point is /oauth: it reads it from the original URL and routes the rest.
      Object.assign(request, { originalUrl: `/oauth${path}` });
      request.url = path;
      server.handle(request, response);
    },
  };
}
