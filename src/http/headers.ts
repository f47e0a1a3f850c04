import { ID_PATTERN } from "../core/ids.js";

/** The answer operations of the OpenAPI document a header can belong to. */
export type AnswerOperation = "chat-completions" | "responses" | "mcp";

/** One header of the adapter's HTTP API: what a client may send it, or what it sends back. */
export interface AdapterHeader {
  /** As the docs spell it; HTTP compares header names without case, and the code reads them in lower case. */
  readonly name: string;
  /**
   * `request`: the adapter reads it from the client; `response`: the adapter sends it; `both`: it
   * reads it and sends it back; `proxy`: a reverse proxy in front adds it, never a browser page.
   */
  readonly direction: "request" | "response" | "both" | "proxy";
  /** What it is for: the docs table's text. */
  readonly meaning: string;
  /** The answer operations of `/openapi.json` that declare it (a header parameter, or a header of the 200 response). */
  readonly operations: readonly AnswerOperation[];
  /** A header the adapter sends: whether a browser page may read it (CORS `Access-Control-Expose-Headers`). */
  readonly exposed: boolean;
  /** The docs page (under docs/, with its anchor) that says what the header does. */
  readonly page: string;
  /** A pattern its value must match, when the adapter checks one. */
  readonly pattern?: string;
}

const ANSWERS: readonly AnswerOperation[] = ["chat-completions", "responses"];
const EVERY: readonly AnswerOperation[] = ["chat-completions", "responses", "mcp"];
const RATE_LIMITS = "rate-limits.md#what-a-client-sees";

/** One of the `x-ratelimit-*` headers (OpenAI's names), sent on every answer when the key's rate limits are on. */
const rateLimit = (name: string, meaning: string): AdapterHeader => ({ name, direction: "response", meaning, operations: EVERY, exposed: true, page: RATE_LIMITS });

/**
 * Every header of the adapter's own API, once: what a client sends it beyond HTTP's standard
 * headers, and what it sends back (docs/development.md#adding-a-response-header). CORS's lists are
 * written from it (`http/cors.ts`), the OpenAPI operations of the answer routes declare its
 * headers (`routes/answer-operations.ts`), `npm run docs` writes its table into docs/operating.md,
 * and a test holds every header the code names to this list (test/features/docs/headers.test.ts).
 * A header's name is public contract: docs/development.md#the-public-contract.
 */
export const ADAPTER_HEADERS: readonly AdapterHeader[] = [
  {
    name: "Service-Workspace",
    direction: "request",
    meaning: "The workspace to answer from; else the one named in the model (`acme/ask`), else `DEFAULT_WORKSPACE`",
    operations: EVERY,
    exposed: false,
    page: "chat-completions.md#how-requests-map-to-queries-and-queries-to-responses",
    pattern: ID_PATTERN.source,
  },
  {
    name: "X-Conversation-Id",
    direction: "request",
    meaning: "A client's conversation id: the query it continues (one of `CONVERSATION_ID_HEADERS`)",
    operations: ["chat-completions"],
    exposed: false,
    page: "chat-completions.md#conversations",
  },
  {
    name: "X-OpenWebUI-Chat-Id",
    direction: "request",
    meaning: "Open WebUI's chat id, read as a conversation id (one of `CONVERSATION_ID_HEADERS`)",
    operations: ["chat-completions"],
    exposed: false,
    page: "chat-completions.md#conversations",
  },
  {
    name: "X-Chat-Annotations",
    direction: "request",
    meaning: "The chat answer's annotation format, over `CHAT_ANNOTATIONS`",
    operations: ["chat-completions"],
    exposed: false,
    page: "citations.md#annotation-formats",
  },
  {
    name: "X-Citation-Style",
    direction: "request",
    meaning: "Citations written into the chat answer's content (`markdown`), over `CITATION_STYLE`",
    operations: ["chat-completions"],
    exposed: false,
    page: "citations.md#annotation-formats",
  },
  {
    name: "X-Structured-Citations",
    direction: "request",
    meaning: "What a structured chat answer does with citation markers inside its JSON strings, over `STRUCTURED_CITATIONS`",
    operations: ["chat-completions"],
    exposed: false,
    page: "structured-answers.md#markers-inside-strings",
  },
  {
    name: "X-Responses-Annotations",
    direction: "request",
    meaning: "The Responses answer's annotation format, over `RESPONSES_ANNOTATIONS`",
    operations: ["responses"],
    exposed: false,
    page: "citations.md#the-responses-api",
  },
  {
    name: "X-Request-Id",
    direction: "both",
    meaning: "The request's id in the log line and the trace: the client's when it sends a well-formed one, else a new one",
    operations: EVERY,
    exposed: true,
    page: "observability.md#logs",
  },
  {
    name: "MCP-Protocol-Version",
    direction: "request",
    meaning: "The MCP revision the client speaks (every request after `initialize`; every request in 2026-07-28)",
    operations: ["mcp"],
    exposed: false,
    page: "mcp.md#connecting",
  },
  {
    name: "Mcp-Session-Id",
    direction: "both",
    meaning: "A 2025-era session's random id, handed out at `initialize` and never stored: what a cancellation names",
    operations: ["mcp"],
    exposed: true,
    page: "mcp.md#cancelling",
  },
  {
    name: "Mcp-Method",
    direction: "request",
    meaning: "A 2026-07-28 request's method, which must agree with its body",
    operations: ["mcp"],
    exposed: false,
    page: "mcp.md#long-answers-as-tasks",
  },
  {
    name: "Mcp-Name",
    direction: "request",
    meaning: "A 2026-07-28 request's tool or task, which must agree with its body",
    operations: ["mcp"],
    exposed: false,
    page: "mcp.md#long-answers-as-tasks",
  },
  {
    name: "X-Forwarded-For",
    direction: "proxy",
    meaning: "The client's address behind a proxy that `TRUSTED_PROXIES` lists (OAuth's attempt limits)",
    operations: [],
    exposed: false,
    page: "mcp-oauth.md#limits",
  },
  {
    name: "Service-Query-Id",
    direction: "response",
    meaning: "The workspace query (or queries, comma-separated, with `n` > 1) that answered",
    operations: ANSWERS,
    exposed: true,
    page: "chat-completions.md#conversations",
  },
  {
    name: "Service-Chat-Ui-Task",
    direction: "response",
    meaning: "A chat UI's housekeeping request the adapter answered itself (`open-webui/title`)",
    operations: ANSWERS,
    exposed: false,
    page: "chat-ui-tasks.md#configuration-and-what-an-operator-sees",
  },
  {
    name: "Service-Ignored-Parameters",
    direction: "response",
    meaning: "What `LENIENT_PARAMETERS=on` ignored rather than refused",
    operations: ANSWERS,
    exposed: false,
    page: "chat-completions.md#how-requests-map-to-queries-and-queries-to-responses",
  },
  rateLimit("x-ratelimit-limit-requests", "The key's limit of requests a minute in the workspace (`RATE_LIMIT_RPM`)"),
  rateLimit("x-ratelimit-remaining-requests", "Requests left in the minute's window"),
  rateLimit("x-ratelimit-reset-requests", "Time until that window starts afresh (`20ms`, `41.25s`, `1m0s`)"),
  rateLimit("x-ratelimit-limit-tokens", "The key's token limit that binds first in the workspace, of `RATE_LIMIT_TPM` and the quotas"),
  rateLimit("x-ratelimit-remaining-tokens", "Tokens left under that limit"),
  rateLimit("x-ratelimit-reset-tokens", "Time until that limit starts afresh"),
  {
    name: "retry-after",
    direction: "response",
    meaning: "Seconds to wait before sending again (a 429 or a 503)",
    operations: [],
    exposed: true,
    page: RATE_LIMITS,
  },
  {
    name: "retry-after-ms",
    direction: "response",
    meaning: "The same in milliseconds, which the OpenAI SDKs prefer",
    operations: [],
    exposed: true,
    page: RATE_LIMITS,
  },
  {
    name: "x-should-retry",
    direction: "response",
    meaning: "`false` on an error a retry cannot fix, so the SDKs start no duplicate query",
    operations: [],
    exposed: true,
    page: "troubleshooting.md#error-bodies-and-statuses",
  },
  {
    name: "X-Accel-Buffering",
    direction: "response",
    meaning: "`no` on a stream, so that a proxy (nginx) does not hold it back",
    operations: [],
    exposed: false,
    page: "troubleshooting.md#symptoms",
  },
  {
    name: "X-Content-Type-Options",
    direction: "response",
    meaning: "`nosniff` on every response",
    operations: [],
    exposed: false,
    page: "operating.md#headers-and-the-api-description",
  },
  {
    name: "X-Frame-Options",
    direction: "response",
    meaning: "`DENY` on the OAuth consent page, which must not be framed",
    operations: [],
    exposed: false,
    page: "mcp-oauth.md#design",
  },
];

/** The headers a browser page may read: CORS `Access-Control-Expose-Headers`. */
export function exposedHeaders(): string {
  return ADAPTER_HEADERS.filter((header) => (header.direction === "response" || header.direction === "both") && header.exposed)
    .map((header) => header.name.toLowerCase())
    .join(", ");
}

/** The headers a browser page may send, besides the credential and the body's type: a preflight's answer when it names none. */
export function allowedHeaders(): string {
  const sent = ADAPTER_HEADERS.filter((header) => header.direction === "request" || header.direction === "both");
  return ["authorization", "content-type", ...sent.map((header) => header.name.toLowerCase())].join(", ");
}

/** The header parameters of an answer operation in `/openapi.json`. */
export function headerParameters(operation: AnswerOperation): Record<string, unknown>[] {
  return ADAPTER_HEADERS.filter((header) => header.direction !== "response" && header.direction !== "proxy" && header.operations.includes(operation)).map((header) => ({
    name: header.name,
    in: "header",
    required: false,
    description: header.meaning,
    schema: header.pattern === undefined ? { type: "string" } : { type: "string", pattern: header.pattern },
  }));
}

/** The headers of an answer operation's 200 response in `/openapi.json`. */
export function responseHeaders(operation: AnswerOperation): Record<string, unknown> {
  const sent = ADAPTER_HEADERS.filter((header) => (header.direction === "response" || header.direction === "both") && header.operations.includes(operation));
  return Object.fromEntries(sent.map((header) => [header.name, { description: header.meaning, schema: { type: "string" } }]));
}

/** The headers' table of docs/operating.md (`npm run docs` writes it; a test checks it is current). */
export function headersTable(): string {
  const rows = ADAPTER_HEADERS.map((header) => {
    const who = { request: "client", response: "adapter", both: "client and adapter", proxy: "a proxy in front" }[header.direction];
    const sentBack = header.direction === "response" || header.direction === "both";
    const browsers = sentBack ? (header.exposed ? "yes" : "no") : "";
    return `| \`${header.name}\` | ${who} | ${header.meaning} | ${browsers} | [${header.page.split("#")[0]}](${header.page}) |`;
  });
  return ["| Header | Sent by | Meaning | A page may read it | More |", "|---|---|---|---|---|", ...rows].join("\n");
}
