import type { IncomingMessage, ServerResponse } from "node:http";
import type { Config } from "../../config/config.js";
import { conversationIdFrom, type ThreadMemory } from "../../continuity/threads/thread-memory.js";
import { type ChatCompletionRequest, chatCompletionRequestSchema } from "../../dialects/chat-completions/chat-request.js";
import { type DocumentLinkSigning, sourceLinker } from "../../answer/source-links.js";
import { chatCitationFormat } from "../../dialects/chat-completions/citation-format.js";
import type { ChatEncoding } from "../../dialects/chat-completions/chat-choice.js";
import { ChatChunkEncoder } from "../../dialects/chat-completions/encode-chunks.js";
import { ChatCompletionEncoder, completionId } from "../../dialects/chat-completions/encode-completion.js";
import { extractPrompt, plainMessages } from "../../dialects/chat-completions/extract-prompt.js";
import { localReply } from "../../chat-ui-tasks/local-reply.js";
import { recognizeChatUiTask } from "../../chat-ui-tasks/recognize-task.js";
import { asksChatJson, forcesChatToolCall, unansweredChatParameters } from "../../dialects/chat-completions/unsupported-parameters.js";
import { readChatStructured, structuredEncoding } from "../../dialects/chat-completions/structured-request.js";
import { structuredMarkers } from "../../dialects/structured-markers.js";
import { checkStructuredSchema } from "../../dialects/structured-parameters.js";
import type { StructuredRequest } from "../../structured/structured-request.js";
import { InvalidRequestError } from "../../errors/adapter-error.js";
import { admitValidRequest, type AnswerRouteOptions, answerHandler, type EdgeSetting, readAnswerRequest } from "../answer-request.js";
import type { Prepared } from "../answer-runner.js";
import { json } from "../delivery/json-delivery.js";
import { sse } from "../delivery/stream-delivery.js";
import type { ChatUiHousekeeping } from "../chat-ui-housekeeping.js";
import { type ParameterPolicy, refuseUnsupported } from "../unsupported-parameters.js";
import type { Route } from "../route-table.js";
import { chatCompletionsOperation } from "./answer-operations.js";

/** What the chat route needs. */
export interface ChatRouteOptions extends AnswerRouteOptions {
  /** Which workspace query a chat history continues (docs/architecture.md#conversations). */
  threads: ThreadMemory;
  config: Pick<Config, EdgeSetting | "answers" | "continuity">;
  /** The base URL of the adapter's document page, when it serves one (the embedded workspace). */
  documentPage?: (() => string) | undefined;
  /** Signs the links to that page where it asks for a key (listed keys). */
  documentLinks?: DocumentLinkSigning | undefined;
  /** Chat UIs' housekeeping, answered before planning (docs/chat-ui-tasks.md). */
  housekeeping: ChatUiHousekeeping;
  /** What becomes of parameters the workspace cannot honour (`LENIENT_PARAMETERS`). */
  parameters: ParameterPolicy;
}

/**
 * `POST /v1/chat/completions` (docs/architecture.md#the-chat-completion-resource), on plain
 * `node:http`: the hot path skips Express's router and request decoration (docs/benchmarks.md).
 * Reads the request (docs/architecture.md#data-flow-of-one-request): read → authenticate →
 * validate → (a chat UI's housekeeping is answered here: docs/chat-ui-tasks.md) → refuse what the
 * workspace cannot do → admit → check the caller's schema (after admission, so that the limits count
 * a request whose schema is refused: docs/structured-answers.md#the-schema-is-untrusted) → find the
 * conversation; the answer runner does the rest.
 */
export function createChatHandler(options: ChatRouteOptions): (request: IncomingMessage, response: ServerResponse) => void {
  const { config } = options;
  const schema = chatCompletionRequestSchema(config.limits);
  const { runner } = options;
  const { documentPage, documentLinks } = options;
  const linkSettings = { template: config.answers.sourceUrlTemplate, documentPage, documentLinks };
  const citationDefaults = { annotations: config.answers.chatAnnotations, style: config.answers.citationStyle };
  const sweep = options.sweeps.of(config.answers.sseKeepAliveMs);

  /** The citation format (`X-Citation-Style`, `X-Chat-Annotations`) and links of a request's answers. */
  function encodingOf(request: IncomingMessage, workspace: string): ChatEncoding {
    const { style: citationStyle, annotations } = chatCitationFormat(request, citationDefaults);
    return { stepsOutput: config.answers.stepsOutput, citationStyle, annotations, links: sourceLinker(linkSettings, workspace) };
  }

  /** The delivery of an answer to `body`: a completion, or a stream of chunks (the JSON alone, for a structured answer). */
  function deliveryOf(
    body: ChatCompletionRequest,
    chosen: ChatEncoding,
    id: string,
    structured: StructuredRequest | null = null,
  ): Prepared<unknown> {
    const encoding = structuredEncoding(chosen, structured, id);
    const created = Math.floor(options.clock.now() / 1000);
    const meta = { id: completionId(id), created, model: body.model, choices: body.n ?? 1 };
    const includeUsage = body.stream_options?.include_usage === true;
    if (!body.stream) return { delivery: json(new ChatCompletionEncoder(meta, encoding)), respondedAs: meta.id };
    return { delivery: sse(new ChatChunkEncoder(meta, encoding, includeUsage), sweep), respondedAs: meta.id };
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const valid = await readAnswerRequest(request, schema, options);
    const { body, model, workspace, identity } = valid;
    const messages = plainMessages(body.messages);
    const task = options.housekeeping.localTask(messages, forcesChatToolCall(body));
    if (task) {
      await admitValidRequest(response, valid, options, { task });
      const id = options.ids.local();
      const prompt = plainMessages(body.messages.slice(-1))[0]?.text ?? "";
      const text = localReply(task, asksChatJson(body));
      const { delivery } = deliveryOf(body, encodingOf(request, workspace), id);
      await runner.answerLocally(response, { prompt, text, choices: body.n ?? 1, id }, delivery);
      return;
    }
    // What it asks in structure; its schema is checked (a 400) once admitted, before anything is asked (docs/structured-answers.md).
    const asked = readChatStructured(body);
    // A chat UI's housekeeping (a title, tags) is never a workspace turn: forcing a function on one is refused, not extracted.
    const housekeeping = asked?.kind === "function" && recognizeChatUiTask(messages) !== null;
    const unanswered = [...unansweredChatParameters(body), ...(housekeeping ? [HOUSEKEEPING_CALL] : [])];
    refuseUnsupported(unanswered, response, options.parameters);
    const structured = housekeeping ? null : asked;
    if (structured && (body.n ?? 1) > 1) {
      throw new InvalidRequestError("A structured answer has one choice: send n 1 (or leave it out).", { param: "n", code: "invalid_value" });
    }
    const markers = structured ? structuredMarkers(request, config.answers.structured.citations) : undefined;
    const choices = body.n ?? 1;
    // What it is expected to cost: its last user message, the prompt (a request without one is refused after admission, as before).
    const question = messages.findLast((message) => message.role === "user")?.text ?? "";
    const cost = { mode: model.mode, prompt: question, choices };
    const { admission } = await admitValidRequest(response, valid, options, { cost });
    checkStructuredSchema(structured, (value) => options.schemas.check(value));
    const encoding = encodingOf(request, workspace);
    const { prompt, messageIndex } = extractPrompt(body.messages);
    const scope = { principal: identity.principal, workspace };
    const hints = { conversationId: conversationIdFrom(request.headers, config.continuity.conversationIdHeaders), messages };
    const continueQueryId = body.query_id ?? (choices === 1 ? await options.threads.find(scope, hints) : null);
    const input = { prompt, mode: model.mode, choices, continueQueryId, createFields: body.query, structured };
    const spanStart = { operation: "chat", model: body.model, stream: body.stream === true } as const;
    const namesQuery = Boolean(body.query_id);
    await runner.run({ response, identity, workspace, meter: admission.meter, input, namesQuery, spanStart, markers }, ([queryId = ""]) => ({
      ...deliveryOf(body, encoding, queryId, structured),
      remember: (sent) => options.threads.remember(scope, hints, { promptIndex: messageIndex, answer: sent[0]?.content ?? "", queryId }),
    }));
  }

  return answerHandler(handle, options);
}

/** The refusal of a forced function on a chat UI's housekeeping request (docs/chat-ui-tasks.md). */
const HOUSEKEEPING_CALL = {
  param: "tool_choice",
  message:
    "This is a chat UI's housekeeping request (a title, tags, follow-ups): the adapter answers these in text and never asks the workspace, so it cannot answer them as a forced function call. Send tool_choice 'auto' or leave it out.",
};

/** The route of `POST /v1/chat/completions`, with its OpenAPI operation. */
export function chatCompletionsRoute(options: ChatRouteOptions): Route {
  return { method: "POST", path: "/v1/chat/completions", handler: { fast: createChatHandler(options) }, operation: chatCompletionsOperation };
}
