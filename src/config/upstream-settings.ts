import { z } from "zod";
import { documented, integer, issue, listOf, optionalHttpUrl, optionalInteger, optionalText } from "./variables.js";

/** The upstream section's variables: the workspace service, its queries, and the calls to it. */
export const upstreamVariables = z.object({
  WORKSPACE_BASE_URL: documented(optionalHttpUrl, "Base URL of the Workspace Knowledge Service; unset starts the embedded workspace"),
  DEFAULT_WORKSPACE: documented(optionalText, "Workspace used when a request names none", "unset (`demo` with the embedded workspace)"),
  QUERY_TIMEOUT_MS: documented(optionalInteger(1), "Sets the deadline of all three modes at once"),
  ASK_TIMEOUT_MS: documented(optionalInteger(1), "Deadline for an `ask` query to finish (wins over `QUERY_TIMEOUT_MS`)", "`120000`"),
  REASON_TIMEOUT_MS: documented(optionalInteger(1), "Deadline for a `reason` query", "`300000`"),
  BUILD_TIMEOUT_MS: documented(optionalInteger(1), "Deadline for a `build` query", "`600000`"),
  POLL_INTERVAL_MIN_MS: documented(integer(100, 5), "Poll interval while the youngest waiting query is new"),
  POLL_INTERVAL_MAX_MS: documented(integer(2000, 5), "Poll interval for long-running queries"),
  MAX_LIST_PAGES: documented(integer(10, 1, 1000), "Pages of `GET /queries` followed per poll to find waiting queries"),
  SHARED_KEY_QUERY_FIELDS: documented(
    z.string().default("").refine((value) => listOf(value).every((name) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(name)), "must be comma-separated plain field names"),
    "Fields of a request's `query` object passed to the workspace's create body while callers share one workspace credential (`WORKSPACE_API_KEY`, a gateway's key, the OAuth team set-up); any other is refused (422), since a field such as bound artifacts or tool results could reach beyond the caller's own queries",
    "unset (none)",
  ),
  MODE_FIELD: documented(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be a plain field name").default("mode"), "Name of the interaction-mode field in the create body"),
  MODELS_CACHE_SECONDS: documented(integer(60, 0), "How long the workspace list behind `GET /v1/models` is cached per credential"),
  REALTIME: documented(z.enum(["auto", "off"]).default("auto"), "`auto` streams a query's answer from its realtime channel as it is written (polling still confirms it); `off` only polls"),
  REALTIME_ALLOWED_HOSTS: documented(z.string().default(""), "Comma-separated hosts (`*.example.com` for subdomains) a query's `ws_url` may point to; others are never contacted", "unset (the upstream's own host)"),
  UPSTREAM_TIMEOUT_MS: documented(integer(30_000, 1), "Bound on waiting for an upstream answer's headers, and on each pause while reading its body"),
  UPSTREAM_CONNECT_TIMEOUT_MS: documented(integer(5_000, 1), "Bound on opening a connection to the upstream"),
  UPSTREAM_MAX_BODY_BYTES: documented(integer(32 * 1024 * 1024, 1024), "Largest upstream response read; a larger one is a 502"),
  UPSTREAM_CONNECTIONS: documented(integer(128, 1), "Keep-alive connections pooled to the upstream"),
  UPSTREAM_KEEPALIVE_MS: documented(integer(30_000, 100), "How long an idle pooled upstream connection is kept"),
});

/** The upstream section's variables as validated. */
export type UpstreamVariables = z.output<typeof upstreamVariables>;

/** The upstream section as the adapter reads it (`config.upstream`); the poll intervals' order is checked here. */
export function upstreamSettings(env: UpstreamVariables, context: z.RefinementCtx) {
  if (env.POLL_INTERVAL_MIN_MS > env.POLL_INTERVAL_MAX_MS) issue(context, "POLL_INTERVAL_MIN_MS", "must not be greater than POLL_INTERVAL_MAX_MS");
  const timeout = (specific: number | undefined, fallback: number) => specific ?? env.QUERY_TIMEOUT_MS ?? fallback;
  return {
    /** Upstream base URL; undefined means "start the embedded workspace". */
    baseUrl: env.WORKSPACE_BASE_URL?.replace(/\/+$/, ""),
    defaultWorkspace: env.DEFAULT_WORKSPACE,
    queryTimeoutMs: {
      ask: timeout(env.ASK_TIMEOUT_MS, 2 * 60_000),
      reason: timeout(env.REASON_TIMEOUT_MS, 5 * 60_000),
      build: timeout(env.BUILD_TIMEOUT_MS, 10 * 60_000),
    },
    pollIntervalMinMs: env.POLL_INTERVAL_MIN_MS,
    pollIntervalMaxMs: env.POLL_INTERVAL_MAX_MS,
    maxListPages: env.MAX_LIST_PAGES,
    modeField: env.MODE_FIELD,
    /** The `query` create fields a client may send under a shared credential (docs/governance.md#whose-query-it-is). */
    sharedKeyQueryFields: listOf(env.SHARED_KEY_QUERY_FIELDS),
    modelsCacheSeconds: env.MODELS_CACHE_SECONDS,
    realtime: env.REALTIME,
    /** Lower-case; empty means the upstream's own host. */
    realtimeAllowedHosts: listOf(env.REALTIME_ALLOWED_HOSTS).map((host) => host.toLowerCase()),
    /** The workspace client's transport (src/upstream/transport.ts). */
    timeoutMs: env.UPSTREAM_TIMEOUT_MS,
    connectTimeoutMs: env.UPSTREAM_CONNECT_TIMEOUT_MS,
    maxResponseBytes: env.UPSTREAM_MAX_BODY_BYTES,
    connections: env.UPSTREAM_CONNECTIONS,
    keepAliveMs: env.UPSTREAM_KEEPALIVE_MS,
  };
}

/** The workspace service, its queries' deadlines and polling, and the calls to it (`WORKSPACE_*`, `*_TIMEOUT_MS`, `POLL_*`, `UPSTREAM_*`, `REALTIME*`). */
export type UpstreamSettings = ReturnType<typeof upstreamSettings>;
