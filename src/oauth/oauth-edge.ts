import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { Authenticator, Identity } from "../auth/authenticate.js";
import { credentialHash } from "../auth/credential-hash.js";
import type { OAuthSettings } from "../config/config.js";
import { AuthenticationError, NotFoundError } from "../errors/adapter-error.js";
import type { WorkspaceClient } from "../upstream/workspace-client.js";
import { countRegistration, type OAuthAttemptLimits, refuseRegistration } from "./attempt-limits.js";
import { type AuthorizationServer, createAuthorizationServer, type OAuthFetch, oauthAddresses, WORKSPACE_SCOPE } from "./authorization-server.js";
import { consentStep } from "./consent.js";
import { GrantKeys } from "./grant-keys.js";
import { IdpSignIn } from "./idp-sign-in.js";
import type { OAuthStorage } from "./oauth-storage.js";
import type { SecretBox } from "./secret-box.js";

/** What the OAuth edge is built from. */
export interface OAuthEdgeOptions {
  settings: OAuthSettings;
  storage: OAuthStorage;
  box: SecretBox;
  client: Pick<WorkspaceClient, "listWorkspaces">;
  logger: Logger;
  /** The limits on registrations and key guesses per client address. */
  attempts: OAuthAttemptLimits;
  /** How client ID metadata documents are fetched (a test's injected allowance for loopback; unset in production). */
  fetchMetadataDocument?: OAuthFetch | undefined;
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
  const team = settings.team
    ? { key: settings.team.workspaceApiKey, signIn: new IdpSignIn(settings.team.idp, box), issuer: settings.team.idp.issuer }
    : undefined;

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
          fetchMetadataDocument: options.fetchMetadataDocument,
          onGrantRevoked: (grantId) => {
            grants.delete(grantId).catch((error: unknown) => logger.warn({ err: error }, "a revoked grant's key was not deleted"));
          },
        });
        const consent = consentStep(server, { box, grants, client: options.client, logger, team, attempts: options.attempts });
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

  return {
    async admit(request) {
      const header = request.headers.authorization ?? "";
      const token = /^Bearer[ \t]+([\x21-\x7e]+)[ \t]*$/i.exec(header)?.[1];
      if (!token) throw challenge(request);
      const { server } = await serverFor(request);
      const found = await server.findAccessToken(token);
      if (!found?.grantId) throw challenge(request, "The access token is not valid (unknown, expired or revoked)");
      const audiences = Array.isArray(found.audience) ? found.audience : [found.audience];
      const { resource } = server.addresses;
      if (!audiences.includes(resource)) throw challenge(request, `The access token was not issued for ${resource}`);
      const grant = await grants.get(found.grantId);
      if (!grant) throw challenge(request, "The grant behind this access token was revoked");
      const hash = credentialHash(grant.key);
      const identity = { upstreamCredential: grant.key, principal: grant.principal ?? hash, upstreamKey: hash };
      const admitted = { identity, workspace: grant.workspace };
      identities.set(request, admitted);
      return admitted;
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
      if (request.method === "POST" && path.split("?")[0] === "/register") {
        const counted = await countRegistration(options.attempts, request);
        if (!counted.counted) {
          logger.info("OAuth: a client registration refused (too many from one address)");
          refuseRegistration(response, counted);
          return;
        }
      }
      // The library's mount point is /oauth: it reads it from the original URL and routes the rest.
      Object.assign(request, { originalUrl: `/oauth${path}` });
      request.url = path;
      server.handle(request, response);
    },
  };
}
