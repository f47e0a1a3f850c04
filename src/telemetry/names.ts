/**
 * Every span name, attribute key and event name the adapter writes, in one place
 * (docs/observability.md). The `gen_ai.*`, `http.*`, `url.*`, `server.*` and `error.type` keys are
 * copied from the OpenTelemetry semantic conventions (GenAI, development status, as of v1.41;
 * HTTP, stable) rather than imported: `@opentelemetry/semantic-conventions/incubating` is not meant
 * to be loaded at run time. Facts of this adapter's own go under its namespace, `workspace_adapter.`.
 */

/** GenAI attribute keys (semantic conventions, gen-ai-spans and registry). */
export const GEN_AI = {
  operationName: "gen_ai.operation.name",
  providerName: "gen_ai.provider.name",
  requestModel: "gen_ai.request.model",
  requestStream: "gen_ai.request.stream",
  requestChoiceCount: "gen_ai.request.choice.count",
  responseModel: "gen_ai.response.model",
  responseId: "gen_ai.response.id",
  finishReasons: "gen_ai.response.finish_reasons",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  reasoningOutputTokens: "gen_ai.usage.reasoning.output_tokens",
  conversationId: "gen_ai.conversation.id",
  toolName: "gen_ai.tool.name",
  toolType: "gen_ai.tool.type",
  /** Opt-in content (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true): JSON arrays of messages. */
  inputMessages: "gen_ai.input.messages",
  outputMessages: "gen_ai.output.messages",
} as const;

/** `gen_ai.operation.name` values the adapter uses. */
export type GenAiOperation = "chat" | "execute_tool";

/** `gen_ai.provider.name`: a custom value (the conventions allow one) naming the service that answers. */
export const PROVIDER_NAME = "workspace";

/** HTTP and general keys (semantic conventions, stable). */
export const HTTP = {
  requestMethod: "http.request.method",
  route: "http.route",
  statusCode: "http.response.status_code",
  resendCount: "http.request.resend_count",
  urlPath: "url.path",
  urlScheme: "url.scheme",
  urlFull: "url.full",
  serverAddress: "server.address",
  serverPort: "server.port",
  userAgent: "user_agent.original",
  errorType: "error.type",
} as const;

/** The adapter's own namespace: facts the conventions have no key for. Never a credential or content. */
export const ADAPTER = {
  requestId: "workspace_adapter.request_id",
  workspace: "workspace_adapter.workspace",
  mode: "workspace_adapter.mode",
  /** The first characters of the SHA-256 of the client's credential: groups a caller's traces, reveals nothing. */
  credentialHashPrefix: "workspace_adapter.credential.hash_prefix",
  /** Who asked (docs/governance.md#who-asks): a named key's name, a gateway's identity, a hash prefix; never a key. */
  clientKey: "workspace_adapter.client.key",
  queryIds: "workspace_adapter.query.ids",
  continued: "workspace_adapter.query.continued",
  queryStatus: "workspace_adapter.query.status",
  choice: "workspace_adapter.choice",
  /** Where a realtime channel ended: `closed`, or the fallback reason. */
  channelEnd: "workspace_adapter.realtime.end",
  channelPublications: "workspace_adapter.realtime.publications",
  pollWaiting: "workspace_adapter.poll.waiting",
  pollOthersWaiting: "workspace_adapter.poll.others_waiting",
  pollPages: "workspace_adapter.poll.pages",
  pollFound: "workspace_adapter.poll.found",
  /** Whether the client received the whole answer. */
  completed: "workspace_adapter.completed",
} as const;

/** Span names (low-cardinality, as the conventions ask). */
export const SPAN = {
  /** A shared poller's list round (its own trace, linked to the requests it serves). */
  poll: "poll queries",
  /** What a replica received from the lease holder's poll (a child of that poll's span). */
  sharedPoll: "receive polled queries",
  /** A query's realtime channel subscription, under the answer span. */
  realtime: "realtime subscription",
} as const;

/** Events on the answer span: time to first token and completion lag read off one span. */
export const EVENT = {
  firstStep: "workspace_adapter.first_step",
  firstText: "workspace_adapter.first_text",
  firstPublication: "workspace_adapter.realtime.first_publication",
  terminal: "workspace_adapter.query.terminal",
} as const;

/** How many characters of the credential hash go on a span. */
export const CREDENTIAL_HASH_PREFIX_LENGTH = 8;
