import { BlockList, isIP } from "node:net";
import { z } from "zod";
import type { AuthVariables } from "./auth-settings.js";
import type { McpVariables } from "./mcp-settings.js";
import type { ServerVariables } from "./server-settings.js";
import { documented, integer, listOf, optionalHttpUrl, optionalText } from "./variables.js";

/** The oauth section's variables (docs/mcp-oauth.md): OAuth 2.1 for the MCP tools at `/oauth/mcp`. */
export const oauthVariables = z.object({
  MCP_OAUTH: documented(
    z.enum(["on", "off"]).default("off"),
    "`on` also serves the MCP tools at `/oauth/mcp` behind OAuth 2.1 (docs/mcp-oauth.md): the adapter is its own authorization server (discovery, client registration, a consent page that takes a workspace key), for claude.ai, ChatGPT and other clients that cannot send a static key. Needs `PUBLIC_URL` (https) unless it listens on loopback",
  ),
  OAUTH_SECRET: documented(
    optionalText,
    "Secrets (comma-separated, each at least 32 characters) the OAuth grants' workspace keys are encrypted with and the consent page's cookies signed with; the first seals and signs, every one opens and verifies (rotation: docs/mcp-oauth.md#rotating-oauth_secret); the same on every replica. Required with `REDIS_URL`",
    "unset (a random one per process: grants end with the process)",
  ),
  OAUTH_IDP_ISSUER: documented(
    optionalHttpUrl,
    "Team set-up (`WORKSPACE_API_KEY` held by the deployment) with `MCP_OAUTH=on`: the OpenID Connect issuer users sign in at on the consent page, exactly as its ID tokens name it (a trailing slash is kept); https unless on loopback",
  ),
  OAUTH_IDP_CLIENT_ID: documented(optionalText, "The adapter's client id at `OAUTH_IDP_ISSUER` (its redirect URI there: `<PUBLIC_URL>/oauth/idp/callback`)"),
  OAUTH_IDP_CLIENT_SECRET: documented(optionalText, "The adapter's client secret at `OAUTH_IDP_ISSUER`; unset for a public client (PKCE only)"),
  OAUTH_IDP_SCOPES: documented(z.string().default("openid email"), "Scopes asked of the identity provider (add `groups` where the provider needs it to put groups in the ID token)"),
  OAUTH_IDP_ALLOWED_EMAIL_DOMAINS: documented(z.string().default(""), "Team set-up: comma-separated email domains whose people may sign in (the ID token's `email`, with `email_verified` true)", "unset"),
  OAUTH_IDP_ALLOWED_GROUPS: documented(z.string().default(""), "Team set-up: comma-separated groups (the ID token's `OAUTH_IDP_GROUPS_CLAIM`) whose members may sign in", "unset"),
  OAUTH_IDP_ALLOWED_SUBJECTS: documented(z.string().default(""), "Team set-up: comma-separated subjects (`sub`) who may sign in", "unset"),
  OAUTH_IDP_GROUPS_CLAIM: documented(z.string().min(1).default("groups"), "The ID token claim that lists a person's groups (or roles)"),
  OAUTH_IDP_GROUP_WORKSPACES: documented(
    z.string().default(""),
    "Team set-up: which workspaces each group may pick, `group=ws1,ws2;other=ws3`; unset: every workspace the deployment's key lists",
    "unset",
  ),
  OAUTH_ACCESS_TOKEN_TTL_SECONDS: documented(integer(3600, 1, 86_400), "Lifetime of an OAuth access token for `/oauth/mcp` (the client refreshes it with its refresh token)"),
  OAUTH_REFRESH_TOKEN_TTL_SECONDS: documented(
    integer(30 * 24 * 3600, 5),
    "Lifetime of an OAuth grant and its refresh tokens (each refresh rotates the refresh token); after it, the user consents again",
  ),
  OAUTH_REGISTRATIONS_PER_HOUR: documented(
    integer(20, 1, 100_000),
    "Dynamic client registrations allowed per client address per hour; past it: 429 with `Retry-After` (counted in Redis when `REDIS_URL` is set)",
  ),
  OAUTH_KEY_FAILURES_PER_15_MINUTES: documented(
    integer(10, 1, 10_000),
    "Wrong workspace keys allowed at the consent page per client address, and per authorization, per 15 minutes; past it the page asks to wait (429) and checks no key (counted in Redis when `REDIS_URL` is set)",
  ),
  OAUTH_AUTHORIZATIONS_PER_MINUTE: documented(integer(30, 1, 100_000), "Authorization requests (`/oauth/authorize`, each of which stores a pending authorization) allowed per client address per minute; past it a 429 page"),
  TRUSTED_PROXIES: documented(
    z.string().default(""),
    "Comma-separated addresses or CIDRs of the reverse proxies in front of the adapter: from them, the right-most `X-Forwarded-For` hop that is not a trusted proxy is the client address the OAuth limits count",
    "unset (the TCP peer is the client)",
  ),
  OAUTH_CLIENT_METADATA_HOSTS: documented(
    z.string().default("claude.ai,claude.com,chatgpt.com,vscode.dev"),
    "Hosts whose client ID metadata documents (an https `client_id`) the authorization server fetches, comma-separated; `*` any public host; empty: none (clients register instead)",
  ),
  OAUTH_MEMORY_MAX_BYTES: documented(integer(64 * 1024 * 1024, 1024 * 1024), "Without Redis: the most the in-process OAuth store holds (pending authorizations go first, grants last)"),
});

/** What the oauth section is read from: its own variables, and the server's address, `MCP` and the deployment's key. */
type OAuthEnvironment = z.output<typeof oauthVariables> &
  Pick<ServerVariables, "HOST" | "PUBLIC_URL"> &
  Pick<McpVariables, "MCP"> &
  Pick<AuthVariables, "WORKSPACE_API_KEY">;

/** Who may sign in in the team set-up: at least one list is set (start-up refuses none). */
export interface SignInAllowList {
  /** Email domains (lower case): the ID token's `email` with `email_verified` true. */
  emailDomains: string[];
  /** Groups or roles, as the ID token's `groupsClaim` lists them. */
  groups: string[];
  /** Subjects (`sub`). */
  subjects: string[];
  groupsClaim: string;
  /** Which workspaces each group may pick; undefined: every workspace the deployment's key lists. */
  groupWorkspaces: Record<string, string[]> | undefined;
}

/** The OpenID Connect provider of the team set-up. */
export interface IdpSettings {
  /** The issuer exactly as its ID tokens and metadata name it (a trailing slash kept). */
  issuer: string;
  clientId: string;
  clientSecret: string | undefined;
  /** The scopes asked for (`openid email` by default). */
  scopes: string;
  allow: SignInAllowList;
}

/** The OAuth authorization server's settings (docs/mcp-oauth.md). */
export interface OAuthSettings {
  /** Where browsers and clients reach the adapter (`PUBLIC_URL`), or undefined: the loopback address a request came to. */
  publicUrl: string | undefined;
  /** `OAUTH_SECRET`'s secrets (the first seals and signs), or empty: a random one per process. */
  secrets: string[];
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  /** Dynamic client registrations allowed per client address per hour. */
  registrationsPerHour: number;
  /** Wrong workspace keys allowed at the consent page per client address (and per authorization) per 15 minutes. */
  keyFailuresPer15Minutes: number;
  /** Authorization requests allowed per client address per minute. */
  authorizationsPerMinute: number;
  /** The reverse proxies whose `X-Forwarded-For` is believed; undefined: none. */
  trustedProxies: BlockList | undefined;
  /** Hosts whose client ID metadata documents are fetched (lower case); `["*"]`: any public host. */
  metadataDocumentHosts: string[];
  /** The in-process store's bound in bytes (without Redis). */
  memoryMaxBytes: number;
  /** Team set-up: the deployment's workspace key, and the identity provider users sign in at instead of typing a key. */
  team?: { workspaceApiKey: string; idp: IdpSettings } | undefined;
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

/** `TRUSTED_PROXIES`: addresses and CIDRs, or a start-up error naming the entry. */
function trustedProxies(text: string, context: z.RefinementCtx): BlockList | undefined {
  const entries = listOf(text);
  if (entries.length === 0) return undefined;
  const list = new BlockList();
  for (const entry of entries) {
    const [address = "", bits, ...rest] = entry.split("/");
    const family = isIP(address);
    const prefix = bits === undefined ? (family === 6 ? 128 : 32) : Number(bits);
    if (!family || rest.length > 0 || !Number.isInteger(prefix) || prefix < 0 || prefix > (family === 6 ? 128 : 32)) {
      context.addIssue({ code: "custom", path: ["TRUSTED_PROXIES"], message: `'${entry}' is not an address or CIDR (e.g. 10.0.0.0/8, fd00::/8)` });
      continue;
    }
    list.addSubnet(address, prefix, family === 6 ? "ipv6" : "ipv4");
  }
  return list;
}

/** `OAUTH_IDP_GROUP_WORKSPACES`: `group=ws1,ws2;other=ws3`. */
function groupWorkspaces(text: string, context: z.RefinementCtx): Record<string, string[]> | undefined {
  const entries = text.split(";").map((part) => part.trim()).filter(Boolean);
  if (entries.length === 0) return undefined;
  const mapping: Record<string, string[]> = {};
  for (const entry of entries) {
    const equals = entry.indexOf("=");
    const group = entry.slice(0, Math.max(equals, 0)).trim();
    const workspaces = listOf(entry.slice(equals + 1));
    if (equals <= 0 || !group || workspaces.length === 0) {
      context.addIssue({ code: "custom", path: ["OAUTH_IDP_GROUP_WORKSPACES"], message: `'${entry}' is not <group>=<workspace>,…` });
      continue;
    }
    mapping[group] = workspaces;
  }
  return mapping;
}

/** The team set-up's identity provider and who may sign in, or start-up errors. */
function teamSettings(env: OAuthEnvironment, key: string, context: z.RefinementCtx): OAuthSettings["team"] {
  if (!env.OAUTH_IDP_ISSUER || !env.OAUTH_IDP_CLIENT_ID) {
    context.addIssue({
      code: "custom",
      path: ["OAUTH_IDP_ISSUER"],
      message: "OAUTH_IDP_ISSUER and OAUTH_IDP_CLIENT_ID are required with MCP_OAUTH=on and WORKSPACE_API_KEY: users sign in at the identity provider (the deployment's key is never typed)",
    });
    return undefined;
  }
  const issuer = new URL(env.OAUTH_IDP_ISSUER);
  if (issuer.protocol !== "https:" && !LOOPBACK_HOSTS.has(issuer.hostname)) {
    context.addIssue({ code: "custom", path: ["OAUTH_IDP_ISSUER"], message: "must be an https URL (plain http only on loopback)" });
  }
  const allow: SignInAllowList = {
    emailDomains: listOf(env.OAUTH_IDP_ALLOWED_EMAIL_DOMAINS).map((domain) => domain.toLowerCase().replace(/^@/, "")),
    groups: listOf(env.OAUTH_IDP_ALLOWED_GROUPS),
    subjects: listOf(env.OAUTH_IDP_ALLOWED_SUBJECTS),
    groupsClaim: env.OAUTH_IDP_GROUPS_CLAIM,
    groupWorkspaces: groupWorkspaces(env.OAUTH_IDP_GROUP_WORKSPACES, context),
  };
  if (allow.emailDomains.length + allow.groups.length + allow.subjects.length === 0) {
    context.addIssue({
      code: "custom",
      path: ["OAUTH_IDP_ALLOWED_EMAIL_DOMAINS"],
      message:
        "the team set-up needs an allow-list of who may sign in: OAUTH_IDP_ALLOWED_EMAIL_DOMAINS, OAUTH_IDP_ALLOWED_GROUPS or OAUTH_IDP_ALLOWED_SUBJECTS " +
        "(without one, anyone the identity provider signs in, e.g. any Google account, would get the deployment's workspaces)",
    });
  }
  // The issuer is kept as written: an ID token's `iss` must equal it exactly (Auth0's ends with a slash).
  const idp = {
    issuer: env.OAUTH_IDP_ISSUER,
    clientId: env.OAUTH_IDP_CLIENT_ID,
    clientSecret: env.OAUTH_IDP_CLIENT_SECRET,
    scopes: env.OAUTH_IDP_SCOPES,
    allow,
  };
  return { workspaceApiKey: key, idp };
}

/** `PUBLIC_URL`'s and `HOST`'s rules: OAuth over plain http only on loopback, listening on loopback too. */
function checkOrigin(env: OAuthEnvironment, publicUrl: string | undefined, context: z.RefinementCtx): void {
  const hostIsLoopback = LOOPBACK_HOSTS.has(env.HOST) || env.HOST.startsWith("127.");
  if (!publicUrl) {
    if (!hostIsLoopback) {
      context.addIssue({
        code: "custom",
        path: ["PUBLIC_URL"],
        message: `required with MCP_OAUTH=on when HOST (${env.HOST}) is not a loopback address: the https address clients and browsers reach the adapter at (OAuth over plain http is allowed on loopback only)`,
      });
    }
    return;
  }
  const url = new URL(publicUrl);
  if (url.protocol !== "https:" && !LOOPBACK_HOSTS.has(url.hostname)) {
    context.addIssue({ code: "custom", path: ["PUBLIC_URL"], message: "must be an https URL with MCP_OAUTH=on (OAuth over plain http is allowed on loopback only)" });
  }
  if (url.protocol === "http:" && !hostIsLoopback) {
    // Consent (a typed key) over plain http on every interface: refused (docs/mcp-oauth.md#settings).
    context.addIssue({ code: "custom", path: ["HOST"], message: `must be a loopback address when PUBLIC_URL is plain http with MCP_OAUTH=on (it is ${env.HOST})` });
  }
  if (url.search || url.hash || (url.pathname !== "/" && url.pathname !== "")) {
    context.addIssue({ code: "custom", path: ["PUBLIC_URL"], message: "must be an origin without a path with MCP_OAUTH=on (the authorization server lives at <PUBLIC_URL>/oauth)" });
  }
}

/**
 * `MCP_OAUTH=on`'s rules: OAuth over plain http only on loopback (as the MCP specification allows);
 * elsewhere an https `PUBLIC_URL`. Replicas sharing Redis share `OAUTH_SECRET`. The team set-up
 * needs an allow-list of who may sign in.
 */
export function oauthSettings(env: OAuthEnvironment, shared: boolean, context: z.RefinementCtx): OAuthSettings | undefined {
  if (env.MCP_OAUTH !== "on") return undefined;
  const publicUrl = env.PUBLIC_URL?.replace(/\/+$/, "");
  if (env.MCP !== "on") context.addIssue({ code: "custom", path: ["MCP_OAUTH"], message: "needs MCP=on (it serves the same tools at /oauth/mcp)" });
  checkOrigin(env, publicUrl, context);
  const secrets = listOf(env.OAUTH_SECRET ?? "");
  for (const secret of secrets) {
    if (secret.length < 32) context.addIssue({ code: "custom", path: ["OAUTH_SECRET"], message: "each secret must be at least 32 characters (e.g. `openssl rand -base64 48`)" });
  }
  if (shared && secrets.length === 0) {
    context.addIssue({ code: "custom", path: ["OAUTH_SECRET"], message: "required with MCP_OAUTH=on and Redis: every replica must read the grants the others stored" });
  }
  return {
    team: env.WORKSPACE_API_KEY ? teamSettings(env, env.WORKSPACE_API_KEY, context) : undefined,
    publicUrl,
    secrets,
    accessTokenTtlSeconds: env.OAUTH_ACCESS_TOKEN_TTL_SECONDS,
    refreshTokenTtlSeconds: env.OAUTH_REFRESH_TOKEN_TTL_SECONDS,
    registrationsPerHour: env.OAUTH_REGISTRATIONS_PER_HOUR,
    keyFailuresPer15Minutes: env.OAUTH_KEY_FAILURES_PER_15_MINUTES,
    authorizationsPerMinute: env.OAUTH_AUTHORIZATIONS_PER_MINUTE,
    trustedProxies: trustedProxies(env.TRUSTED_PROXIES, context),
    metadataDocumentHosts: listOf(env.OAUTH_CLIENT_METADATA_HOSTS).map((host) => host.toLowerCase()),
    memoryMaxBytes: env.OAUTH_MEMORY_MAX_BYTES,
  };
}
