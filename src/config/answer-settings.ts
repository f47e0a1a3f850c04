import { z } from "zod";
import { documented, integer, optionalText } from "./variables.js";

/** The answers section's variables: how an answer is shaped and delivered to the client. */
export const answerVariables = z.object({
  STEPS_OUTPUT: documented(z.enum(["reasoning", "content", "none"]).default("reasoning"), "Where steps go: `reasoning`, `content` (inside `<think>`) or `none`"),
  CITATION_STYLE: documented(
    z.enum(["annotations", "markdown"]).default("annotations"),
    "`markdown` also makes citations Markdown in the content (name markers and a Sources list as links), for UIs that ignore annotations; per request: `X-Citation-Style`",
  ),
  CHAT_ANNOTATIONS: documented(
    z.enum(["file_citation", "url_citation", "none"]).default("url_citation"),
    "Chat annotation format: `url_citation` (OpenAI's, which every client accepts), `file_citation` (the interface's; clients known to reject it still get `url_citation`) or `none`; per request: `X-Chat-Annotations`",
  ),
  RESPONSES_ANNOTATIONS: documented(
    z.enum(["url_citation", "file_citation", "none"]).default("url_citation"),
    "Responses API annotation format: `url_citation` (the Open Responses specification's only one, which every Responses client keeps; its `url` is the source's link), `file_citation` (OpenAI's file shape: `document` sources in `@ai-sdk/openai`, dropped by `@ai-sdk/open-responses` and refused by strict Open Responses clients) or `none`; per request: `X-Responses-Annotations`",
  ),
  SOURCE_URL_TEMPLATE: documented(
    optionalText,
    "Link of each source: `{workspace}`, `{filename}`, `{page}`, `{title}` are replaced (URL-encoded), e.g. `https://docs.example.com/{workspace}/{filename}#page={page}`",
    "unset (the adapter's document page with the embedded workspace; `urn:workspace-document:…` otherwise)",
  ),
  CHAT_UI_TASKS: documented(
    z.enum(["local", "workspace"]).default("local"),
    "Chat UIs' housekeeping requests (titles, tags, follow-ups, autocompletion, search queries of Open WebUI, LibreChat, Lobe Chat; docs/chat-ui-tasks.md): `local` answers them in the adapter, never as a workspace query or a turn of a thread; `workspace` passes them on as questions",
  ),
  LENIENT_PARAMETERS: documented(
    z.enum(["on", "off"]).default("off"),
    "`off` refuses (400) what the workspace cannot do: a `tool_choice` forcing anything but one function (`required` among several tools, a custom or hosted tool), a legacy `function_call`; `on` ignores them and names them in the `service-ignored-parameters` header",
  ),
  // Structured answers (docs/structured-answers.md): the caller's schema is untrusted input.
  STRUCTURED_SCHEMA_MAX_BYTES: documented(integer(65_536, 1024, 1_048_576), "Longest JSON Schema a structured answer may be asked with, in characters of JSON; a longer one is a 400"),
  STRUCTURED_SCHEMA_MAX_DEPTH: documented(integer(24, 4, 200), "Deepest nesting of that schema, in JSON levels; a deeper one is a 400"),
  STRUCTURED_CITATIONS: documented(
    z.enum(["keep", "strip"]).default("keep"),
    "Citation markers inside a structured answer's strings: `keep` them, or `strip` them (the sources stay beside the JSON); per request: `X-Structured-Citations`",
  ),
  SSE_KEEPALIVE_MS: documented(integer(15_000, 10), "Silence after which a stream gets a `: keep-alive` comment"),
  WEBSOCKET_PING_MS: documented(
    integer(30_000, 1000),
    "Responses WebSocket mode (docs/responses-api.md#websocket-mode): silence after which the adapter pings a socket; one that has not answered the previous ping by then is closed, so a client gone without a close costs nothing for long",
  ),
  WEBSOCKET_MAX_PER_KEY: documented(
    integer(64, 1, 100_000),
    "Responses WebSocket mode: open sockets one principal (key, named key or gateway identity) may hold on a replica; past it the upgrade is a 429 `too_many_connections`, so that one client cannot hold the replica's sockets (each idle one costs ~7 KB)",
  ),
  WEBSOCKET_MAX_MINUTES: documented(
    integer(60, 1, 1440),
    "Longest life of a Responses WebSocket connection, as OpenAI's and the Open Responses spec's 60 minutes: then `websocket_connection_limit_reached` and a close, once any answer in flight has ended; bounds what one connection holds",
  ),
});

/** The answers section's variables as validated. */
export type AnswerVariables = z.output<typeof answerVariables>;

/** The answers section as the adapter reads it (`config.answers`). */
export function answerSettings(env: AnswerVariables) {
  return {
    stepsOutput: env.STEPS_OUTPUT,
    citationStyle: env.CITATION_STYLE,
    chatAnnotations: env.CHAT_ANNOTATIONS,
    responsesAnnotations: env.RESPONSES_ANNOTATIONS,
    sourceUrlTemplate: env.SOURCE_URL_TEMPLATE,
    /** Who answers chat UIs' housekeeping requests: the adapter (`local`) or the workspace. */
    chatUiTasks: env.CHAT_UI_TASKS,
    /** Whether parameters asking for what the workspace cannot do are ignored (named in a header) rather than refused. */
    lenientParameters: env.LENIENT_PARAMETERS === "on",
    /** Structured answers: how much schema the adapter takes on, and the markers inside the JSON's strings. */
    structured: {
      schemaMaxBytes: env.STRUCTURED_SCHEMA_MAX_BYTES,
      schemaMaxDepth: env.STRUCTURED_SCHEMA_MAX_DEPTH,
      citations: env.STRUCTURED_CITATIONS,
    },
    sseKeepAliveMs: env.SSE_KEEPALIVE_MS,
    /** Responses WebSocket mode: the ping interval and a connection's longest life. */
    webSocket: {
      pingMs: env.WEBSOCKET_PING_MS,
      maxMs: env.WEBSOCKET_MAX_MINUTES * 60_000,
      perPrincipal: env.WEBSOCKET_MAX_PER_KEY,
    },
  };
}

/** How answers reach the client: steps, citations and their links, chat UIs' housekeeping, what is refused, keep-alives. */
export type AnswerSettings = ReturnType<typeof answerSettings>;
