import { z } from "zod";
import type { Mode } from "../core/modes.js";

const integer = (fallback: number, min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max).default(fallback);
const optionalInteger = (min: number) => z.coerce.number().int().min(min).optional();
const optionalText = z
  .string()
  .trim()
  .transform((value) => (value === "" ? undefined : value))
  .optional();

/**
 * Every environment variable the adapter reads, with its default. The README's configuration
 * table is written from this schema; a bad value stops start-up with the variable's name.
 */
export const environmentSchema = z.object({
  PORT: integer(8080, 0, 65535),
  HOST: z.string().min(1).default("127.0.0.1"),
  WORKSPACE_BASE_URL: optionalText.pipe(z.url({ protocol: /^https?$/ }).optional()),
  DEFAULT_WORKSPACE: optionalText,
  QUERY_TIMEOUT_MS: optionalInteger(1),
  ASK_TIMEOUT_MS: optionalInteger(1),
  REASON_TIMEOUT_MS: optionalInteger(1),
  BUILD_TIMEOUT_MS: optionalInteger(1),
  POLL_INTERVAL_MIN_MS: integer(100, 5),
  POLL_INTERVAL_MAX_MS: integer(2000, 5),
  MAX_LIST_PAGES: integer(10, 1, 1000),
  MAX_CHOICES: integer(8, 1, 128),
  MODE_FIELD: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be a plain field name")
    .default("mode"),
  STEPS_OUTPUT: z.enum(["reasoning", "content", "none"]).default("reasoning"),
  CITATION_STYLE: z.enum(["annotations", "markdown"]).default("annotations"),
  UPSTREAM_TIMEOUT_MS: integer(30_000, 1),
  UPSTREAM_CONNECT_TIMEOUT_MS: integer(5_000, 1),
  UPSTREAM_CONNECTIONS: integer(128, 1),
  UPSTREAM_KEEPALIVE_MS: integer(30_000, 100),
  UPSTREAM_MAX_BODY_BYTES: integer(32 * 1024 * 1024, 1024),
  MAX_MESSAGES: integer(1000, 1),
  MAX_JSON_DEPTH: integer(32, 4, 1000),
  MAX_CONCURRENT_REQUESTS: integer(4000, 1),
  MAX_CONCURRENT_PER_WORKSPACE: integer(2000, 1),
  SHUTDOWN_GRACE_MS: integer(10_000, 0),
  SERVER_HEADERS_TIMEOUT_MS: integer(10_000, 100),
  SERVER_REQUEST_TIMEOUT_MS: integer(30_000, 100),
  CORS_ORIGINS: z.string().default(""),
  SSE_KEEPALIVE_MS: integer(15_000, 10),
  BODY_LIMIT_BYTES: integer(1024 * 1024, 1024),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  LOG_FORMAT: z.enum(["auto", "json", "pretty"]).default("auto"),
  WORKSPACE_API_KEY: optionalText,
  ADAPTER_API_KEYS: z.string().default(""),
  REDIS_URL: optionalText.pipe(z.url({ protocol: /^rediss?$/ }).optional()),
  CONVERSATION_TTL_SECONDS: integer(7 * 24 * 3600, 1),
  CONVERSATION_MAX_ENTRIES: integer(10_000, 1),
  CONVERSATION_ID_HEADERS: z.string().default("x-conversation-id,x-openwebui-chat-id"),
  MODELS_CACHE_SECONDS: integer(60, 0),
  REALTIME: z.enum(["auto", "off"]).default("auto"),
  REALTIME_ALLOWED_HOSTS: z.string().default(""),
  EMBEDDED_DOCUMENTS_DIR: optionalText,
  EMBEDDED_STEP_DELAY_MS: integer(120, 0, 60_000),
  EMBEDDED_WORKSPACES: z.string().default("demo"),
});

/** The validated configuration the rest of the adapter is built from. */
export interface Config {
  port: number;
  host: string;
  /** Upstream base URL; undefined means "start the embedded workspace". */
  workspaceBaseUrl: string | undefined;
  defaultWorkspace: string | undefined;
  /** Per-mode deadline for a query to finish (docs/upstream-assumptions.md#terminal-states-and-deadlines). */
  queryTimeoutMs: Record<Mode, number>;
  pollIntervalMinMs: number;
  pollIntervalMaxMs: number;
  maxListPages: number;
  maxChoices: number;
  /** Name of the interaction-mode field in the create body (the interface does not show it). */
  modeField: string;
  /** Where query steps go in the response (docs/upstream-assumptions.md#steps). */
  stepsOutput: "reasoning" | "content" | "none";
  /** `markdown` also appends a Sources list to the content, for UIs that ignore annotations. */
  citationStyle: "annotations" | "markdown";
  upstreamTimeoutMs: number;
  upstreamConnectTimeoutMs: number;
  /** Size of the keep-alive pool to the upstream, and how long an idle connection is kept. */
  upstreamConnections: number;
  upstreamKeepAliveMs: number;
  upstreamMaxBodyBytes: number;
  maxMessages: number;
  /** Deepest JSON nesting accepted in a request body. */
  maxJsonDepth: number;
  maxConcurrentRequests: number;
  maxConcurrentPerWorkspace: number;
  /** Time in-flight requests get to finish after SIGTERM before open streams are ended. */
  shutdownGraceMs: number;
  serverHeadersTimeoutMs: number;
  serverRequestTimeoutMs: number;
  /** Origins allowed to call from a browser; empty turns CORS off. */
  corsOrigins: string[];
  /** Idle time after which a stream gets a `: keep-alive` comment. */
  sseKeepAliveMs: number;
  bodyLimitBytes: number;
  logLevel: z.infer<typeof environmentSchema>["LOG_LEVEL"];
  /** `auto`: pretty lines at a terminal, JSON otherwise. */
  logFormat: "auto" | "json" | "pretty";
  /** Deployment-held upstream key; when set, only `adapterApiKeys` are accepted from clients. */
  workspaceApiKey: string | undefined;
  adapterApiKeys: string[];
  /** Shared conversation store; unset keeps conversations in process. */
  redisUrl: string | undefined;
  conversationTtlSeconds: number;
  conversationMaxEntries: number;
  /** Request headers that carry a client conversation id, lower-cased, in order of preference. */
  conversationIdHeaders: string[];
  modelsCacheSeconds: number;
  /** `auto` follows a query's realtime channel when it has one (docs/upstream-assumptions.md#realtime); `off` only polls. */
  realtime: "auto" | "off";
  /** Hosts a `ws_url` may point to, lower-case; empty means the upstream's own host. */
  realtimeAllowedHosts: string[];
  embedded: { documentsDir: string | undefined; stepDelayMs: number; workspaces: string[] };
}

/** Thrown when the environment holds a bad value; its message names every variable at fault. */
export class ConfigError extends Error {}

/** Reads and validates the configuration from an environment (process.env in production). */
export function loadConfig(environment: Record<string, string | undefined>): Config {
  const parsed = environmentSchema.safeParse(environment);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join(".")}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  const env = parsed.data;
  if (env.POLL_INTERVAL_MIN_MS > env.POLL_INTERVAL_MAX_MS) {
    throw new ConfigError(
      "Invalid configuration:\n  POLL_INTERVAL_MIN_MS: must not be greater than POLL_INTERVAL_MAX_MS",
    );
  }
  const list = (value: string) =>
    value
      .split(",")
      .map((item) => item.trim())
      .filter(Boolean);
  const adapterApiKeys = list(env.ADAPTER_API_KEYS);
  if (env.WORKSPACE_API_KEY && adapterApiKeys.length === 0) {
    throw new ConfigError(
      "Invalid configuration:\n  ADAPTER_API_KEYS: required when WORKSPACE_API_KEY is set (the adapter would otherwise lend its key to anyone)",
    );
  }
  const timeout = (specific: number | undefined, fallback: number) =>
    specific ?? env.QUERY_TIMEOUT_MS ?? fallback;
  return {
    port: env.PORT,
    host: env.HOST,
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
    logLevel: env.LOG_LEVEL,
    logFormat: env.LOG_FORMAT,
    workspaceApiKey: env.WORKSPACE_API_KEY,
    adapterApiKeys,
    redisUrl: env.REDIS_URL,
    conversationTtlSeconds: env.CONVERSATION_TTL_SECONDS,
    conversationMaxEntries: env.CONVERSATION_MAX_ENTRIES,
    conversationIdHeaders: list(env.CONVERSATION_ID_HEADERS).map((name) => name.toLowerCase()),
    modelsCacheSeconds: env.MODELS_CACHE_SECONDS,
    realtime: env.REALTIME,
    realtimeAllowedHosts: list(env.REALTIME_ALLOWED_HOSTS).map((host) => host.toLowerCase()),
    embedded: {
      documentsDir: env.EMBEDDED_DOCUMENTS_DIR,
      stepDelayMs: env.EMBEDDED_STEP_DELAY_MS,
      workspaces: list(env.EMBEDDED_WORKSPACES),
    },
  };
}
