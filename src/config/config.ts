import { z } from "zod";
import { redisTopologyOf } from "./redis-topology.js";
import { ID_PATTERN } from "../core/ids.js";
import { oauthSettings } from "./oauth-settings.js";

export type { IdpSettings, OAuthSettings, SignInAllowList } from "./oauth-settings.js";

const integer = (fallback: number, min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max).default(fallback);
const optionalInteger = (min: number) => z.coerce.number().int().min(min).optional();
const optionalText = z
  .string()
  .trim()
  .transform((value) => (value === "" ? undefined : value))
  .optional();

/** What the configuration table (docs/configuration.md) and `--help` show of a variable: what it does, and its default as a reader should see it. */
export interface VariableDoc {
  meaning: string;
  shown: string;
}

/** A variable's schema with its documentation attached (read back by `variableDoc`). */
function documented<T extends z.ZodType>(schema: T, meaning: string, shown?: string): T {
  return schema.meta({ description: meaning, shown: shown ?? defaultShown(schema) });
}

function defaultShown(schema: z.ZodType): string {
  const def = schema._zod.def as { type: string; defaultValue?: unknown };
  if (def.type !== "default" || def.defaultValue === "" || def.defaultValue === undefined) return "unset";
  return `\`${String(def.defaultValue)}\``;
}

/** The limits one workspace can have (docs/rate-limits.md). */
export const LIMIT_KINDS = ["rpm", "concurrent", "tpm"] as const;
/** A kind of limit: requests per minute, answers in flight, tokens per minute. */
export type LimitKind = (typeof LIMIT_KINDS)[number];
/** A workspace's limits: a number, or null for "no limit" (an override's `off`). */
export type LimitValues = Partial<Record<LimitKind, number | null>>;

/**
 * `RATE_LIMIT_OVERRIDES`: `<workspace>=<kind>:<value>,…` entries separated by `;`, where a value is
 * a whole number from 1, or `off`. A malformed entry stops start-up naming the entry and what is wrong.
 */
const rateLimitOverrides = z
  .string()
  .default("")
  .transform((text, context) => {
    const overrides: Record<string, LimitValues> = {};
    const problem = (entry: string, message: string) => context.addIssue({ code: "custom", message: `'${entry}': ${message}` });
    for (const entry of text.split(";").map((part) => part.trim()).filter(Boolean)) {
      const equals = entry.indexOf("=");
      const workspace = entry.slice(0, Math.max(equals, 0)).trim();
      if (equals < 0 || !ID_PATTERN.test(workspace)) {
        problem(entry, "expected <workspace>=<kind>:<value>,… with a workspace id before `=` (e.g. acme=rpm:600,concurrent:20)");
        continue;
      }
      if (Object.hasOwn(overrides, workspace)) {
        problem(entry, `workspace '${workspace}' is named twice`);
        continue;
      }
      const values: LimitValues = {};
      for (const setting of entry.slice(equals + 1).split(",").map((part) => part.trim())) {
        const [kind = "", value = "", ...rest] = setting.split(":").map((part) => part.trim());
        if (!(LIMIT_KINDS as readonly string[]).includes(kind) || rest.length > 0) {
          problem(entry, `'${setting}' is not <kind>:<value> with a kind of ${LIMIT_KINDS.join(", ")}`);
        } else if (Object.hasOwn(values, kind)) {
          problem(entry, `'${kind}' is set twice`);
        } else if (value === "off") {
          values[kind as LimitKind] = null;
        } else if (/^[1-9][0-9]{0,14}$/.test(value)) {
          values[kind as LimitKind] = Number(value);
        } else {
          problem(entry, `'${setting}': the value must be a whole number from 1, or off`);
        }
      }
      overrides[workspace] = values;
    }
    return overrides;
  });

/**
 * Every environment variable the adapter reads: its type, default and meaning, once. The
 * `Config` type, the configuration table of docs/configuration.md and `--help` are all derived from it; a bad
 * value stops start-up with the variable's name. Adding a variable is one entry here (and its
 * field in `toConfig` when the adapter reads it under another name).
 */
export const environmentSchema = z.object({
  PORT: documented(integer(8080, 0, 65535), "Port to listen on"),
  HOST: documented(z.string().min(1).default("127.0.0.1"), "Address to listen on (`0.0.0.0` in a container)"),
  WORKSPACE_BASE_URL: documented(optionalText.pipe(z.url({ protocol: /^https?$/ }).optional()), "Base URL of the Workspace Knowledge Service; unset starts the embedded workspace"),
  DEFAULT_WORKSPACE: documented(optionalText, "Workspace used when a request names none", "unset (`demo` with the embedded workspace)"),
  WORKSPACE_API_KEY: documented(optionalText, "A workspace key the adapter presents upstream itself (team set-up); requires `ADAPTER_API_KEYS`"),
  ADAPTER_API_KEYS: documented(z.string().default(""), "Comma-separated client keys accepted when `WORKSPACE_API_KEY` is set"),
  QUERY_TIMEOUT_MS: documented(optionalInteger(1), "Sets the deadline of all three modes at once"),
  ASK_TIMEOUT_MS: documented(optionalInteger(1), "Deadline for an `ask` query to finish (wins over `QUERY_TIMEOUT_MS`)", "`120000`"),
  REASON_TIMEOUT_MS: documented(optionalInteger(1), "Deadline for a `reason` query", "`300000`"),
  BUILD_TIMEOUT_MS: documented(optionalInteger(1), "Deadline for a `build` query", "`600000`"),
  POLL_INTERVAL_MIN_MS: documented(integer(100, 5), "Poll interval while the youngest waiting query is new"),
  POLL_INTERVAL_MAX_MS: documented(integer(2000, 5), "Poll interval for long-running queries"),
  MAX_LIST_PAGES: documented(integer(10, 1, 1000), "Pages of `GET /queries` followed per poll to find waiting queries"),
  MAX_CHOICES: documented(integer(8, 1, 128), "Largest `n` accepted"),
  MODE_FIELD: documented(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be a plain field name").default("mode"), "Name of the interaction-mode field in the create body"),
  STEPS_OUTPUT: documented(z.enum(["reasoning", "content", "none"]).default("reasoning"), "Where steps go: `reasoning`, `content` (inside `<think>`) or `none`"),
  CITATION_STYLE: documented(
    z.enum(["annotations", "markdown"]).default("annotations"),
    "`markdown` also makes citations Markdown in the content (name markers and a Sources list as links), for UIs that ignore annotations; per request: `X-Citation-Style`",
  ),
  CHAT_ANNOTATIONS: documented(
    z.enum(["file_citation", "url_citation", "none"]).default("url_citation"),
    "Chat annotation format: `url_citation` (OpenAI's, which every client accepts), `file_citation` (the interface's; clients known to reject it still get `url_citation`) or `none`; per request: `X-Chat-Annotations`",
  ),
  SOURCE_URL_TEMPLATE: documented(
    optionalText,
    "Link of each source: `{workspace}`, `{filename}`, `{page}`, `{title}` are replaced (URL-encoded), e.g. `https://docs.example.com/{workspace}/{filename}#page={page}`",
    "unset (the adapter's document page with the embedded workspace; `urn:workspace-document:…` otherwise)",
  ),
  PUBLIC_URL: documented(
    optionalText.pipe(z.url({ protocol: /^https?$/ }).optional()),
    "The adapter's address as browsers reach it, for links to its own pages",
    "unset (the address it listens on)",
  ),
  CHAT_UI_TASKS: documented(
    z.enum(["local", "workspace"]).default("local"),
    "Chat UIs' housekeeping requests (titles, tags, follow-ups, autocompletion, search queries of Open WebUI, LibreChat, Lobe Chat; docs/chat-ui-tasks.md): `local` answers them in the adapter, never as a workspace query or a turn of a thread; `workspace` passes them on as questions",
  ),
  LENIENT_PARAMETERS: documented(
    z.enum(["on", "off"]).default("off"),
    "`off` refuses (400) what the workspace cannot do: `response_format`/`text.format` `json_schema` or `json_object`, a `tool_choice` forcing a tool call; `on` ignores them and names them in the `service-ignored-parameters` header",
  ),
  SSE_KEEPALIVE_MS: documented(integer(15_000, 10), "Silence after which a stream gets a `: keep-alive` comment"),
  REDIS_URL: documented(
    optionalText.pipe(z.url({ protocol: /^rediss?$/ }).optional()),
    "One Redis node, `redis://[user:password@]host:port[/db]` (`rediss://…` for TLS), to share state between replicas; unset keeps it in process",
  ),
  REDIS_CLUSTER_NODES: documented(
    optionalText,
    "A Redis Cluster instead: comma-separated `host:port` seed nodes (ElastiCache, MemoryDB, Memorystore, Azure cluster mode: the configuration endpoint)",
  ),
  REDIS_SENTINELS: documented(optionalText, "A Sentinel-watched Redis instead: comma-separated `host:port` of the sentinels"),
  REDIS_SENTINEL_MASTER: documented(optionalText, "The master name the sentinels monitor (with `REDIS_SENTINELS`)"),
  REDIS_USERNAME: documented(optionalText, "ACL user of the Redis nodes (cluster or Sentinel; with `REDIS_URL`, when the URL names none)"),
  REDIS_PASSWORD: documented(optionalText, "Password of the Redis nodes (cluster or Sentinel; with `REDIS_URL`, when the URL names none)"),
  REDIS_SENTINEL_USERNAME: documented(optionalText, "ACL user of the sentinels themselves, when they require one"),
  REDIS_SENTINEL_PASSWORD: documented(optionalText, "Password of the sentinels themselves, when they require one"),
  REDIS_TLS: documented(
    z.enum(["on", "off"]).default("off"),
    "`on`: TLS to cluster or Sentinel nodes, certificates checked against the hostnames given (extra CAs: `NODE_EXTRA_CA_CERTS`)",
  ),
  REDIS_KEY_PREFIX: documented(z.string().min(1).default("workspace-openai-adapter:"), "Prefix of every key the adapter writes in Redis"),
  REDIS_COMMAND_TIMEOUT_MS: documented(
    integer(1000, 10, 60_000),
    "How long a Redis command may take while Redis is connected before it counts as failed (a slow Redis is waited for; one that is disconnected or failing in a row is skipped at once)",
  ),
  CONVERSATION_TTL_SECONDS: documented(integer(7 * 24 * 3600, 1), "How long a conversation is remembered after its last turn"),
  CONVERSATION_MAX_ENTRIES: documented(integer(10_000, 1), "Bound of the in-process conversation memory"),
  CONVERSATION_ID_HEADERS: documented(z.string().default("x-conversation-id,x-openwebui-chat-id"), "Headers that carry a client conversation id"),
  CLUSTER_POLLING: documented(
    z.enum(["auto", "off"]).default("auto"),
    "With Redis, `auto` shares each workspace's polling between replicas (one lease holder lists for all); `off` polls per replica",
  ),
  CLUSTER_LEASE_MS: documented(integer(3000, 200), "How long a replica's polling lease lasts unrenewed: a dead holder is replaced within about this long"),
  RESPONSES_TTL_SECONDS: documented(integer(30 * 24 * 3600, 1), "How long a stored response (`store` not false) can be retrieved and continued"),
  RESPONSES_MAX_ENTRIES: documented(integer(10_000, 1), "Bound of the in-process response store (Redis holds them when configured)"),
  MODELS_CACHE_SECONDS: documented(integer(60, 0), "How long the workspace list behind `GET /v1/models` is cached per credential"),
  REALTIME: documented(z.enum(["auto", "off"]).default("auto"), "`auto` streams a query's answer from its realtime channel as it is written (polling still confirms it); `off` only polls"),
  REALTIME_ALLOWED_HOSTS: documented(z.string().default(""), "Comma-separated hosts (`*.example.com` for subdomains) a query's `ws_url` may point to; others are never contacted", "unset (the upstream's own host)"),
  UPSTREAM_TIMEOUT_MS: documented(integer(30_000, 1), "Bound on waiting for an upstream answer's headers, and on each pause while reading its body"),
  UPSTREAM_CONNECT_TIMEOUT_MS: documented(integer(5_000, 1), "Bound on opening a connection to the upstream"),
  UPSTREAM_MAX_BODY_BYTES: documented(integer(32 * 1024 * 1024, 1024), "Largest upstream response read; a larger one is a 502"),
  UPSTREAM_CONNECTIONS: documented(integer(128, 1), "Keep-alive connections pooled to the upstream"),
  UPSTREAM_KEEPALIVE_MS: documented(integer(30_000, 100), "How long an idle pooled upstream connection is kept"),
  BODY_LIMIT_BYTES: documented(integer(1024 * 1024, 1024), "Largest request body (413 beyond)"),
  MAX_MESSAGES: documented(integer(1000, 1), "Most messages accepted in one request"),
  MAX_JSON_DEPTH: documented(integer(32, 4, 1000), "Deepest JSON nesting accepted in a request body"),
  MAX_CONCURRENT_REQUESTS: documented(integer(4000, 1), "Requests in flight before new ones get a fast 429"),
  MAX_CONCURRENT_PER_WORKSPACE: documented(integer(2000, 1), "The same, per workspace"),
  RATE_LIMIT_RPM: documented(optionalInteger(1), "Requests per minute per client key and workspace; beyond it a 429 with `retry-after` (shared between replicas with `REDIS_URL`)", "unset (no limit)"),
  RATE_LIMIT_CONCURRENT: documented(optionalInteger(1), "Answers in flight per client key and workspace; beyond it a 429", "unset (no limit)"),
  RATE_LIMIT_TPM: documented(
    optionalInteger(1),
    "Tokens per minute per client key and workspace (prompt and completion, as usage counts them, charged when an answer is delivered); a request is refused while the minute's count has reached it",
    "unset (no limit)",
  ),
  RATE_LIMIT_OVERRIDES: documented(
    rateLimitOverrides,
    "Per-workspace limits, `;`-separated: `acme=rpm:600,concurrent:20;lab=tpm:off` (`rpm`, `concurrent`, `tpm`: a number, or `off` for none); kinds not named keep the defaults above",
    "unset",
  ),
  RATE_LIMIT_SLOT_TTL_MS: documented(
    integer(30_000, 1000),
    "Lifetime of a concurrency slot unless renewed: an answer renews its slot while it runs, so a replica that dies frees its slots within this time",
  ),
  SHUTDOWN_GRACE_MS: documented(integer(10_000, 0), "After SIGTERM/SIGINT, time in-flight requests get before open streams are ended"),
  SERVER_HEADERS_TIMEOUT_MS: documented(integer(10_000, 100), "A client must send its request headers within this time"),
  SERVER_REQUEST_TIMEOUT_MS: documented(integer(30_000, 100), "A client must send its whole request within this time (the answer's stream is not bounded)"),
  CORS_ORIGINS: documented(z.string().default(""), "Comma-separated browser origins allowed to call the adapter; `*` for any", "unset (CORS off)"),
  PLAYGROUND: documented(
    z.enum(["auto", "on", "off"]).default("auto"),
    "The playground page at `/`: `auto` serves it with the embedded workspace only",
  ),
  MCP: documented(
    z.enum(["on", "off"]).default("on"),
    "`on` serves the workspace as a remote MCP server (Streamable HTTP, stateless) at `/mcp` and `/mcp/{workspace}`: tools `ask`, `reason`, `build`, `search`, `fetch`; `off` answers 404 there",
  ),
  MCP_APPS: documented(
    z.enum(["on", "off"]).default("on"),
    "`on` links the answer card (an MCP App, `ui://workspace/answer-v1.html`) to `ask`, `reason` and `build` for hosts that render MCP Apps (docs/mcp.md#the-answer-card); `off` serves exactly the tools without it",
  ),
  // --- OAuth for MCP (docs/mcp-oauth.md): one contiguous block, shaped in oauth-settings.ts ---
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
    optionalText.pipe(z.url({ protocol: /^https?$/ }).optional()),
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
  LOG_LEVEL: documented(z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"), "`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`"),
  LOG_FORMAT: documented(z.enum(["auto", "json", "pretty"]).default("auto"), "`json`, `pretty`, or `auto` (pretty at a terminal, JSON otherwise)"),
  EMBEDDED_DOCUMENTS_DIR: documented(optionalText, "Folder of documents (Markdown, text, PDF; watched for changes) the embedded workspace answers from (`--documents`)", "this README and `docs/`"),
  EMBEDDED_STEP_DELAY_MS: documented(integer(120, 0, 60_000), "Pace of the embedded workspace: a step every so often, output chunks every half of it; `0` answers at once"),
  EMBEDDED_WORKSPACES: documented(z.string().default("demo"), "Comma-separated workspace ids the embedded workspace knows"),
});

/** The environment after validation, before it is shaped into `Config`. */
export type Environment = z.output<typeof environmentSchema>;

const list = (value: string) =>
  value
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean);

/** The limits of every workspace: the defaults, and each override resolved over them. */
export interface RateLimitSettings {
  /** What a workspace without an override gets. */
  defaults: LimitValues;
  /** Workspaces with an override: their limits with the defaults filled in. */
  workspaces: Record<string, LimitValues>;
  /** How long a concurrency slot lives unless renewed. */
  slotTtlMs: number;
}

function rateLimitSettings(env: Environment): RateLimitSettings | undefined {
  const defaults: LimitValues = {
    rpm: env.RATE_LIMIT_RPM ?? null,
    concurrent: env.RATE_LIMIT_CONCURRENT ?? null,
    tpm: env.RATE_LIMIT_TPM ?? null,
  };
  const workspaces = Object.fromEntries(
    Object.entries(env.RATE_LIMIT_OVERRIDES).map(([workspace, values]) => [workspace, { ...defaults, ...values }]),
  );
  const limited = (values: LimitValues) => LIMIT_KINDS.some((kind) => typeof values[kind] === "number");
  if (!limited(defaults) && !Object.values(workspaces).some(limited)) return undefined;
  return { defaults, workspaces, slotTtlMs: env.RATE_LIMIT_SLOT_TTL_MS };
}

/** The environment shaped as the adapter reads it; cross-variable rules are checked here. */
function toConfig(env: Environment, context: z.RefinementCtx) {
  if (env.POLL_INTERVAL_MIN_MS > env.POLL_INTERVAL_MAX_MS) {
    context.addIssue({ code: "custom", path: ["POLL_INTERVAL_MIN_MS"], message: "must not be greater than POLL_INTERVAL_MAX_MS" });
  }
  const adapterApiKeys = list(env.ADAPTER_API_KEYS);
  if (env.WORKSPACE_API_KEY && adapterApiKeys.length === 0) {
    context.addIssue({
      code: "custom",
      path: ["ADAPTER_API_KEYS"],
      message: "required when WORKSPACE_API_KEY is set (the adapter would otherwise lend its key to anyone)",
    });
  }
  const timeout = (specific: number | undefined, fallback: number) => specific ?? env.QUERY_TIMEOUT_MS ?? fallback;
  const redis = redisTopologyOf(env, context);
  const oauth = oauthSettings(env, redis !== undefined, context);
  return {
    port: env.PORT,
    host: env.HOST,
    /** Upstream base URL; undefined means "start the embedded workspace". */
    workspaceBaseUrl: env.WORKSPACE_BASE_URL?.replace(/\/+$/, ""),
    defaultWorkspace: env.DEFAULT_WORKSPACE,
    queryTimeoutMs: {
      ask: timeout(env.ASK_TIMEOUT_MS, 2 * 60_000),
      reason: timeout(env.REASON_TIMEOUT_MS, 5 * 60_000),
      build: timeout(env.BUILD_TIMEOUT_MS, 10 * 60_000),
    },
    pollIntervalMinMs: env.POLL_INTERVAL_MIN_MS,
    pollIntervalMaxMs: env.POLL_INTERVAL_MAX_MS,
    maxListPages: env.MAX_LIST_PAGES,
    maxChoices: env.MAX_CHOICES,
    modeField: env.MODE_FIELD,
    stepsOutput: env.STEPS_OUTPUT,
    citationStyle: env.CITATION_STYLE,
    chatAnnotations: env.CHAT_ANNOTATIONS,
    sourceUrlTemplate: env.SOURCE_URL_TEMPLATE,
    /** Who answers chat UIs' housekeeping requests: the adapter (`local`) or the workspace. */
    chatUiTasks: env.CHAT_UI_TASKS,
    /** Whether parameters asking for what the workspace cannot do are ignored (named in a header) rather than refused. */
    lenientParameters: env.LENIENT_PARAMETERS === "on",
    publicUrl: env.PUBLIC_URL?.replace(/\/+$/, ""),
    upstreamTimeoutMs: env.UPSTREAM_TIMEOUT_MS,
    upstreamConnectTimeoutMs: env.UPSTREAM_CONNECT_TIMEOUT_MS,
    upstreamConnections: env.UPSTREAM_CONNECTIONS,
    upstreamKeepAliveMs: env.UPSTREAM_KEEPALIVE_MS,
    upstreamMaxBodyBytes: env.UPSTREAM_MAX_BODY_BYTES,
    maxMessages: env.MAX_MESSAGES,
    maxJsonDepth: env.MAX_JSON_DEPTH,
    maxConcurrentRequests: env.MAX_CONCURRENT_REQUESTS,
    maxConcurrentPerWorkspace: env.MAX_CONCURRENT_PER_WORKSPACE,
    /** Limits per client key and workspace; undefined when none is set anywhere (admission then costs nothing). */
    rateLimits: rateLimitSettings(env),
    shutdownGraceMs: env.SHUTDOWN_GRACE_MS,
    serverHeadersTimeoutMs: env.SERVER_HEADERS_TIMEOUT_MS,
    serverRequestTimeoutMs: env.SERVER_REQUEST_TIMEOUT_MS,
    corsOrigins: list(env.CORS_ORIGINS),
    sseKeepAliveMs: env.SSE_KEEPALIVE_MS,
    bodyLimitBytes: env.BODY_LIMIT_BYTES,
    /** Whether `/` serves the playground. */
    playground: env.PLAYGROUND === "on" || (env.PLAYGROUND === "auto" && !env.WORKSPACE_BASE_URL),
    /** Whether `/mcp` serves the workspace's tools. */
    mcp: env.MCP === "on",
    /** Whether the answer tools link the answer card (MCP Apps). */
    mcpApps: env.MCP_APPS === "on",
    /** OAuth for `/oauth/mcp` (docs/mcp-oauth.md), or undefined when `MCP_OAUTH` is off. */
    mcpOauth: oauth,
    logLevel: env.LOG_LEVEL,
    logFormat: env.LOG_FORMAT,
    workspaceApiKey: env.WORKSPACE_API_KEY,
    adapterApiKeys,
    /** The Redis the replicas share, or undefined: everything stays in process. */
    redis,
    redisKeyPrefix: env.REDIS_KEY_PREFIX,
    redisCommandTimeoutMs: env.REDIS_COMMAND_TIMEOUT_MS,
    /** How long an answer's end waits for its conversation turn and stored response to be written: a Redis command's bound. */
    storeWriteWaitMs: env.REDIS_COMMAND_TIMEOUT_MS,
    /** Shared polling between replicas: with Redis and not turned off. */
    clusterPolling: env.CLUSTER_POLLING === "auto" && redis !== undefined,
    /** At least one and a half of the longest poll interval, so the holder renews it in time. */
    clusterLeaseMs: Math.max(env.CLUSTER_LEASE_MS, Math.ceil(1.5 * env.POLL_INTERVAL_MAX_MS)),
    conversationTtlSeconds: env.CONVERSATION_TTL_SECONDS,
    conversationMaxEntries: env.CONVERSATION_MAX_ENTRIES,
    /** Lower-cased, in order of preference. */
    conversationIdHeaders: list(env.CONVERSATION_ID_HEADERS).map((name) => name.toLowerCase()),
    responsesTtlSeconds: env.RESPONSES_TTL_SECONDS,
    responsesMaxEntries: env.RESPONSES_MAX_ENTRIES,
    modelsCacheSeconds: env.MODELS_CACHE_SECONDS,
    realtime: env.REALTIME,
    /** Lower-case; empty means the upstream's own host. */
    realtimeAllowedHosts: list(env.REALTIME_ALLOWED_HOSTS).map((host) => host.toLowerCase()),
    embedded: {
      documentsDir: env.EMBEDDED_DOCUMENTS_DIR,
      stepDelayMs: env.EMBEDDED_STEP_DELAY_MS,
      workspaces: list(env.EMBEDDED_WORKSPACES),
    },
  };
}

/** The whole configuration schema: the environment in, the adapter's `Config` out. */
export const configSchema = environmentSchema.transform(toConfig);

/** The validated configuration the rest of the adapter is built from. */
export type Config = z.output<typeof configSchema>;

/** Thrown when the environment holds a bad value; its message names every variable at fault. */
export class ConfigError extends Error {}

/** Reads and validates the configuration from an environment (process.env in production). */
export function loadConfig(environment: Record<string, string | undefined>): Config {
  const parsed = configSchema.safeParse(environment);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join(".")}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  return parsed.data;
}

/** The documentation of every variable, in schema order (docs/configuration.md's table and `--help`). */
export function variableDocs(): [name: string, doc: VariableDoc][] {
  return Object.entries(environmentSchema.shape).map(([name, schema]) => {
    const meta = (schema as z.ZodType).meta() as { description: string; shown: string };
    return [name, { meaning: meta.description, shown: meta.shown }];
  });
}
