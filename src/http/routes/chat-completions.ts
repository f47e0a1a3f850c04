import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Config } from "../../config/config.js";
import type { ChatCompletionRequest } from "../../dialects/chat-completions/chat-request.js";
import { type ConversationHints, conversationIdFrom } from "../../conversations/conversations.js";
import { chatCompletionRequestSchema } from "../../dialects/chat-completions/chat-request.js";
import { sourceLinker } from "../../answer/source-links.js";
import { chatCitationFormat } from "../../dialects/chat-completions/citation-format.js";
import { ChatChunkEncoder } from "../../dialects/chat-completions/encode-chunks.js";
import { ChatCompletionEncoder, completionId } from "../../dialects/chat-completions/encode-completion.js";
import { extractPrompt, plainMessages } from "../../dialects/chat-completions/extract-prompt.js";
import { localReply } from "../../chat-ui-tasks/local-reply.js";
import { type ChatUiTask, taskName } from "../../chat-ui-tasks/chat-ui-task.js";
import { asksChatJson, forcesChatToolCall, unsupportedChatParameters } from "../../dialects/chat-completions/unsupported-parameters.js";
import { planQueries } from "../../plan/plan-queries.js";
import { admitValidRequest, type AnswerRouteOptions, answerHandler, readAnswerRequest, traceChat, type ValidAnswerRequest } from "../answer-request.js";
import type { ChatUiHousekeeping } from "../chat-ui-housekeeping.js";
import { type ParameterPolicy, refuseUnsupported } from "../unsupported-parameters.js";
import { errorResponse, workspaceHeader } from "../openapi.js";
import type { Route } from "../route-table.js";
import { abortWhenClientLeaves } from "../request-body.js";
import { type BeforeAnswerEnds, sendAnswer, streamAnswer } from "../write-answer.js";

/** What the chat route needs. */
export interface ChatRouteOptions extends AnswerRouteOptions {
  config: Pick<
    Config,
    | "maxChoices"
    | "maxMessages"
    | "maxJsonDepth"
    | "bodyLimitBytes"
    | "defaultWorkspace"
    | "modeField"
    | "sseKeepAliveMs"
    | "conversationIdHeaders"
    | "stepsOutput"
    | "citationStyle"
    | "chatAnnotations"
    | "sourceUrlTemplate"
  >;
  /** The base URL of the adapter's document page, when it serves one (the embedded workspace). */
  documentPage?: (() => string) | undefined;
  /** Chat UIs' housekeeping, answered before planning (docs/chat-ui-tasks.md). */
  housekeeping: ChatUiHousekeeping;
  /** What becomes of parameters the workspace cannot honour (`LENIENT_PARAMETERS`). */
  parameters: ParameterPolicy;
}

/**
 * `POST /v1/chat/completions` (docs/architecture.md#the-chat-completion-resource), on plain
 * `node:http`: the hot path skips Express's router and request decoration (docs/benchmarks.md).
 * Reads like the data flow (docs/architecture.md#data-flow-of-one-request): read → authenticate →
 * validate → (a chat UI's housekeeping is answered here: docs/chat-ui-tasks.md) → refuse what the
 * workspace cannot do → admit → find the conversation → plan → run → encode → remember → write.
 */
export function createChatHandler(options: ChatRouteOptions): (request: IncomingMessage, response: ServerResponse) => void {
  const { config, facts } = options;
  const schema = chatCompletionRequestSchema(config);
  const newQueryId = options.newQueryId ?? randomUUID;
  const linkSettings = { template: config.sourceUrlTemplate, documentPage: options.documentPage };
  const citationDefaults = { annotations: config.chatAnnotations, style: config.citationStyle };
  const sweep = options.sweeps.of(config.sseKeepAliveMs);
  const streamContext = { sweep, facts, lifecycle: options.lifecycle, logger: options.logger };

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const valid = await readAnswerRequest(request, schema, options);
    const messages = plainMessages(valid.body.messages);
    const task = options.housekeeping.localTask(messages, forcesChatToolCall(valid.body));
    if (task) return answerChatUiTask(request, response, valid, task);
    refuseUnsupported(unsupportedChatParameters(valid.body), response, options.parameters);
    const admitted = await admitValidRequest(response, valid, options);
    const { identity, body, model, workspace, admission } = admitted;
    const trace = traceChat(response, facts, admitted);
    const encoding = encodingOf(request, workspace);
    const { prompt, messageIndex } = extractPrompt(body.messages);
    const scope = { principal: identity.principal, workspace };
    const conversationId = conversationIdFrom(request.headers, config.conversationIdHeaders);
    const hints: ConversationHints = { conversationId, messages };
    const choices = body.n ?? 1;
    const continueQueryId = body.query_id ?? (choices === 1 ? await options.conversations.find(scope, hints) : null);
    const plan = planQueries(
      { prompt, mode: model.mode, choices, continueQueryId, createFields: body.query },
      { modeField: config.modeField, newQueryId },
    );
    const queryIds = plan.queries.map((query) => query.queryId);
    Object.assign(facts.of(response), { workspace, mode: model.mode, queryIds, continued: plan.continued });
    response.setHeader("service-query-id", queryIds.join(", "));

    const includeUsage = body.stream_options?.include_usage === true;
    const reportsUsage = !body.stream || includeUsage;
    const answer = admission.meter(
      await options.answers.start({
        plan,
        caller: { credential: identity.upstreamCredential, workspace, credentialKey: identity.upstreamKey },
        controller: abortWhenClientLeaves(response, facts),
        countsUsage: reportsUsage || admission.countsTokens,
        trace,
      }),
    );
    const queryId = queryIds[0] as string;
    const meta = { id: completionId(queryId), created: Math.floor(options.clock.now() / 1000), model: body.model, choices };
    trace?.respondedAs(meta.id);
    const remember: BeforeAnswerEnds = (sent) => {
      // A stream that does not report usage is counted as it ends, for the tokens-per-minute limit only.
      if (!reportsUsage && admission.countsTokens) answer.usage(sent).catch(() => undefined);
      return options.conversations.remember(scope, hints, { promptIndex: messageIndex, answer: sent[0]?.content ?? "", queryId });
    };
    if (body.stream) {
      await streamAnswer(response, answer, new ChatChunkEncoder(meta, encoding, includeUsage), streamContext, remember);
      return;
    }
    await sendAnswer(response, answer, new ChatCompletionEncoder(meta, encoding), remember);
  }

  /** The citation format and links of a request's answers (`X-Citation-Style`, `X-Chat-Annotations`). */
  function encodingOf(request: IncomingMessage, workspace: string) {
    const { style: citationStyle, annotations } = chatCitationFormat(request, citationDefaults);
    return { stepsOutput: config.stepsOutput, citationStyle, annotations, links: sourceLinker(linkSettings, workspace) };
  }

  /**
   * A chat UI's housekeeping, answered by the adapter (docs/chat-ui-tasks.md): no workspace query,
   * no conversation looked up or remembered, not counted against the key's rate limits (only the
   * process's concurrency caps); delivered by the same encoders and writer as any answer.
   */
  async function answerChatUiTask(
    request: IncomingMessage,
    response: ServerResponse,
    valid: ValidAnswerRequest<ChatCompletionRequest>,
    task: ChatUiTask,
  ): Promise<void> {
    const { body, model, workspace } = valid;
    facts.whenClosed(response, options.limit.acquire(workspace));
    Object.assign(facts.of(response), { workspace, mode: model.mode, chatUiTask: taskName(task) });
    response.setHeader("service-chat-ui-task", taskName(task));
    const choices = body.n ?? 1;
    const id = `local-${randomUUID()}`;
    const prompt = plainMessages(body.messages.slice(-1))[0]?.text ?? "";
    const answer = options.answers.answerLocally({ prompt, text: localReply(task, asksChatJson(body)), choices, id });
    const meta = { id: completionId(id), created: Math.floor(options.clock.now() / 1000), model: body.model, choices };
    const encoding = encodingOf(request, workspace);
    const includeUsage = body.stream_options?.include_usage === true;
    if (body.stream) await streamAnswer(response, answer, new ChatChunkEncoder(meta, encoding, includeUsage), streamContext);
    else await sendAnswer(response, answer, new ChatCompletionEncoder(meta, encoding));
  }

  return answerHandler(handle, options);
}

/** The route of `POST /v1/chat/completions`, with its OpenAPI operation. */
export function chatCompletionsRoute(options: ChatRouteOptions): Route {
  const bearer = [{ bearer: [] }];
  return {
    method: "POST",
    path: "/v1/chat/completions",
    handler: { fast: createChatHandler(options) },
    operation: {
      summary: "Answer from the workspace: one query per choice, JSON or a stream of chunks",
      security: bearer,
      parameters: [
        workspaceHeader,
        { name: "X-Conversation-Id", in: "header", required: false, schema: { type: "string" }, description: "Continue this conversation's query" },
      ],
      requestBody: {
        required: true,
        content: { "application/json": { schema: { $ref: "#/components/schemas/ChatCompletionRequest" } } },
      },
      responses: {
        "200": {
          description: "A completion, or with `stream: true` server-sent events of chunks ending with `data: [DONE]`",
          headers: { "Service-Query-Id": { description: "The upstream query id(s)", schema: { type: "string" } } },
          content: {
            "application/json": { schema: { $ref: "#/components/schemas/ChatCompletion" } },
            "text/event-stream": { schema: { $ref: "#/components/schemas/ChatCompletionChunk" } },
          },
        },
        "400": errorResponse("Asks for what the workspace cannot do: JSON that follows a schema or a JSON object, a forced tool call (`param` names it; `LENIENT_PARAMETERS=on` ignores them instead)"),
        "401": errorResponse("No bearer credential, or one the upstream refused"),
        "404": errorResponse("Passed on from the upstream (a query of another workspace, an unknown workspace)"),
        "413": errorResponse("Body larger than the limit"),
        "415": errorResponse("Body not sent as JSON"),
        "422": errorResponse("Invalid request (FastAPI-style `detail` list)"),
        "429": errorResponse("Over a rate limit of this key in the workspace (`retry-after`, `retry-after-ms`), too many requests in flight here, or upstream"),
        "502": errorResponse("The query FAILED, or the upstream failed or could not be reached"),
        "504": errorResponse("The query did not finish before its mode's deadline"),
      },
    },
  };
}
