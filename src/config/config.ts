import { z } from "zod";

const integer = (fallback: number, min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max).default(fallback);
const optionalInteger = (min: number) => z.coerce.number().int().min(min).optional();
const optionalText = z
  .string()
  .trim()
  .transform((value) => (value === "" ? undefined : value))
  .optional();

/** What the README table and `--help` show of a variable: what it does, and its default as a reader should see it. */
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

/**
 * Every environment variable the adapter reads: its type, default and meaning, once. The
 * `Config` type, the README's configuration table and `--help` are all derived from it; a bad
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
    z.enum(["file_citation", "url_citation", "none"]).optional(),
    "Chat annotation format: `file_citation` (the interface's), `url_citation` (OpenAI's) or `none`; per request: `X-Chat-Annotations`",
    "unset (`url_citation` for clients that accept nothing else, `file_citation` otherwise)",
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
  SSE_KEEPALIVE_MS: documented(integer(15_000, 10), "Silence after which a stream gets a `: keep-alive` comment"),
  REDIS_URL: documented(optionalText.pipe(z.url({ protocol: /^rediss?$/ }).optional()), "`redis://…` (or `rediss://…`) to share state between replicas; unset keeps it in process"),
  REDIS_KEY_PREFIX: documented(z.string().min(1).default("workspace-openai-adapter:"), "Prefix of every key the adapter writes in Redis"),
  CONVERSATION_TTL_SECONDS: documented(integer(7 * 24 * 3600, 1), "How long a conversation is remembered after its last turn"),
  CONVERSATION_MAX_ENTRIES: documented(integer(10_000, 1), "Bound of the in-process conversation memory"),
  CONVERSATION_ID_HEADERS: documented(z.string().default("x-conversation-id,x-openwebui-chat-id"), "Headers that carry a client conversation id"),
  CLUSTER_POLLING: documented(
    z.enum(["auto", "off"]).default("auto"),
    "With `REDIS_URL`, `auto` shares each workspace's polling between replicas (one lease holder lists for all); `off` polls per replica",
  ),
  CLUSTER_LEASE_MS: documented(integer(3000, 200), "How long a replica's polling lease lasts unrenewed: a dead holder is replaced within about this long"),
  RESPONSES_TTL_SECONDS: documented(integer(30 * 24 * 3600, 1), "How long a stored response (`store` not false) can be retrieved and continued"),
  RESPONSES_MAX_ENTRIES: documented(integer(10_000, 1), "Bound of the in-process response store (Redis holds them with `REDIS_URL`)"),
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
  LOG_LEVEL: documented(z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"), "`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`"),
  LOG_FORMAT: documented(z.enum(["auto", "json", "pretty"]).default("auto"), "`json`, `pretty`, or `auto` (pretty at a terminal, JSON otherwise)"),
  EMBEDDED_DOCUMENTS_DIR: documented(optionalText, "Folder of documents (Markdown, text, PDF; watched for changes) the embedded workspace answers from (`--documents`)", "this README and `docs/`"),
  EMBEDDED_STEP_DELAY_MS: documented(integer(120, 0, 60_000), "Pace of the embedded workspace: a step every so often, output chunks every half of it; `0` answers at once"),
  EMBEDDED_WORKSPACES: documented(z.string().default("demo"), "Comma-separated workspace ids the embedded workspace knows"),
});

/** The environment after validation, before it is shaped into `Config`. */
type Environment = z.output<typeof environmentSchema>;

const list = (value: string) =>
  value
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean);

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
    logLevel: env.LOG_LEVEL,
    logFormat: env.LOG_FORMAT,
    workspaceApiKey: env.WORKSPACE_API_KEY,
    adapterApiKeys,
    redisUrl: env.REDIS_URL,
    redisKeyPrefix: env.REDIS_KEY_PREFIX,
    /** Shared polling between replicas: with Redis and not turned off. */
    clusterPolling: env.CLUSTER_POLLING === "auto" && env.REDIS_URL !== undefined,
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

/** The documentation of every variable, in schema order (the README table and `--help`). */
export function variableDocs(): [name: string, doc: VariableDoc][] {
  return Object.entries(environmentSchema.shape).map(([name, schema]) => {
    const meta = (schema as z.ZodType).meta() as { description: string; shown: string };
    return [name, { meaning: meta.description, shown: meta.shown }];
  });
}
