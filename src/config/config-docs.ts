import type { environmentSchema } from "./config.js";

/** One variable's documentation: its default as a reader should see it, and what it does. */
interface VariableDoc {
  default: string;
  meaning: string;
}

/**
 * Documentation of every environment variable, in the order a reader needs them. The type makes
 * it complete: a variable added to the schema without a line here does not compile. The README's
 * table and `--help` are both written from it.
 */
export const CONFIG_DOCS: Record<keyof typeof environmentSchema.shape, VariableDoc> = {
  PORT: { default: "`8080`", meaning: "Port to listen on" },
  HOST: { default: "`127.0.0.1`", meaning: "Address to listen on (`0.0.0.0` in a container)" },
  WORKSPACE_BASE_URL: { default: "unset", meaning: "Base URL of the Workspace Knowledge Service; unset starts the embedded workspace" },
  DEFAULT_WORKSPACE: { default: "unset (`demo` with the embedded workspace)", meaning: "Workspace used when a request names none" },
  WORKSPACE_API_KEY: {
    default: "unset",
    meaning: "A workspace key the adapter presents upstream itself (team set-up); requires `ADAPTER_API_KEYS`",
  },
  ADAPTER_API_KEYS: { default: "unset", meaning: "Comma-separated client keys accepted when `WORKSPACE_API_KEY` is set" },
  QUERY_TIMEOUT_MS: { default: "unset", meaning: "Sets the deadline of all three modes at once" },
  ASK_TIMEOUT_MS: { default: "`120000`", meaning: "Deadline for an `ask` query to finish (wins over `QUERY_TIMEOUT_MS`)" },
  REASON_TIMEOUT_MS: { default: "`300000`", meaning: "Deadline for a `reason` query" },
  BUILD_TIMEOUT_MS: { default: "`600000`", meaning: "Deadline for a `build` query" },
  POLL_INTERVAL_MIN_MS: { default: "`100`", meaning: "Poll interval while the youngest waiting query is new" },
  POLL_INTERVAL_MAX_MS: { default: "`2000`", meaning: "Poll interval for long-running queries" },
  MAX_LIST_PAGES: { default: "`10`", meaning: "Pages of `GET /queries` followed per poll to find waiting queries" },
  MAX_CHOICES: { default: "`8`", meaning: "Largest `n` accepted" },
  MODE_FIELD: { default: "`mode`", meaning: "Name of the interaction-mode field in the create body" },
  STEPS_OUTPUT: { default: "`reasoning`", meaning: "Where steps go: `reasoning`, `content` (inside `<think>`) or `none`" },
  CITATION_STYLE: {
    default: "`annotations`",
    meaning: "`markdown` also appends a Sources list to the content, for UIs that ignore annotations",
  },
  SSE_KEEPALIVE_MS: { default: "`15000`", meaning: "Silence after which a stream gets a `: keep-alive` comment" },
  REDIS_URL: { default: "unset", meaning: "`redis://…` to share conversations between replicas; unset keeps them in process" },
  CONVERSATION_TTL_SECONDS: { default: "`604800`", meaning: "How long a conversation is remembered after its last turn" },
  CONVERSATION_MAX_ENTRIES: { default: "`10000`", meaning: "Bound of the in-process conversation memory" },
  CONVERSATION_ID_HEADERS: {
    default: "`x-conversation-id,x-openwebui-chat-id`",
    meaning: "Headers that carry a client conversation id",
  },
  MODELS_CACHE_SECONDS: { default: "`60`", meaning: "How long the workspace list behind `GET /v1/models` is cached per credential" },
  REALTIME: {
    default: "`auto`",
    meaning: "`auto` streams a query's answer from its realtime channel as it is written (polling still confirms it); `off` only polls",
  },
  REALTIME_ALLOWED_HOSTS: {
    default: "unset (the upstream's own host)",
    meaning: "Comma-separated hosts (`*.example.com` for subdomains) a query's `ws_url` may point to; others are never contacted",
  },
  UPSTREAM_TIMEOUT_MS: {
    default: "`30000`",
    meaning: "Bound on waiting for an upstream answer's headers, and on each pause while reading its body",
  },
  UPSTREAM_CONNECT_TIMEOUT_MS: { default: "`5000`", meaning: "Bound on opening a connection to the upstream" },
  UPSTREAM_MAX_BODY_BYTES: { default: "`33554432`", meaning: "Largest upstream response read; a larger one is a 502" },
  UPSTREAM_CONNECTIONS: { default: "`128`", meaning: "Keep-alive connections pooled to the upstream" },
  UPSTREAM_KEEPALIVE_MS: { default: "`30000`", meaning: "How long an idle pooled upstream connection is kept" },
  BODY_LIMIT_BYTES: { default: "`1048576`", meaning: "Largest request body (413 beyond)" },
  MAX_MESSAGES: { default: "`1000`", meaning: "Most messages accepted in one request" },
  MAX_JSON_DEPTH: { default: "`32`", meaning: "Deepest JSON nesting accepted in a request body" },
  MAX_CONCURRENT_REQUESTS: { default: "`4000`", meaning: "Requests in flight before new ones get a fast 429" },
  MAX_CONCURRENT_PER_WORKSPACE: { default: "`2000`", meaning: "The same, per workspace" },
  SHUTDOWN_GRACE_MS: {
    default: "`10000`",
    meaning: "After SIGTERM/SIGINT, time in-flight requests get before open streams are ended",
  },
  SERVER_HEADERS_TIMEOUT_MS: { default: "`10000`", meaning: "A client must send its request headers within this time" },
  SERVER_REQUEST_TIMEOUT_MS: {
    default: "`30000`",
    meaning: "A client must send its whole request within this time (the answer's stream is not bounded)",
  },
  CORS_ORIGINS: { default: "unset (CORS off)", meaning: "Comma-separated browser origins allowed to call the adapter; `*` for any" },
  LOG_LEVEL: { default: "`info`", meaning: "`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`" },
  LOG_FORMAT: { default: "`auto`", meaning: "`json`, `pretty`, or `auto` (pretty at a terminal, JSON otherwise)" },
  EMBEDDED_DOCUMENTS_DIR: {
    default: "this README and `docs/`",
    meaning: "Folder of `.md`/`.txt` documents the embedded workspace answers from",
  },
  EMBEDDED_STEP_DELAY_MS: {
    default: "`120`",
    meaning: "Pace of the embedded workspace: a step every so often, output chunks every half of it; `0` answers at once",
  },
  EMBEDDED_WORKSPACES: { default: "`demo`", meaning: "Comma-separated workspace ids the embedded workspace knows" },
};

/** The README's configuration table (`npm run docs` writes it; a test checks it is current). */
export function configurationTable(): string {
  const rows = Object.entries(CONFIG_DOCS).map(([name, doc]) => `| \`${name}\` | ${doc.default} | ${doc.meaning} |`);
  return ["| Variable | Default | Meaning |", "|---|---|---|", ...rows].join("\n");
}

/** The command-line flag of a variable: `WORKSPACE_BASE_URL` → `--workspace-base-url`. */
export function flagOf(variable: string): string {
  return `--${variable.toLowerCase().replaceAll("_", "-")}`;
}

/** `--help`: every flag with its variable, default and meaning, as plain text. */
export function helpText(version: string): string {
  const plain = (text: string) => text.replaceAll("`", "");
  const lines = Object.entries(CONFIG_DOCS).map(
    ([name, doc]) => `  ${flagOf(name).padEnd(32)} ${plain(doc.meaning)}\n  ${"".padEnd(32)} (${name}; default: ${plain(doc.default)})`,
  );
  return [
    `workspace-openai-adapter ${version}: an OpenAI-compatible chat-completions server for a Workspace Knowledge Service`,
    "",
    "Usage: workspace-openai-adapter [--flag value | --flag=value]...",
    "",
    "Every flag sets the environment variable in brackets (a flag wins over the environment).",
    "Without --workspace-base-url it starts the embedded workspace, a local stand-in.",
    "",
    "  --help, -h                       Show this text",
    "  --version, -v                    Show the version",
    ...lines,
    "",
  ].join("\n");
}
