import type { Config } from "../../config/config.js";
import type { PlainMessage } from "../../core/plain-message.js";
import type { ThreadScope } from "../../continuity/threads/thread-keys.js";
import { conversationIdFrom, type ThreadHints, type ThreadMemory } from "../../continuity/threads/thread-memory.js";
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
import { answerInOrder, type AnswerRouteOptions, type EdgeSetting } from "../answer-request.js";
import type { Delivery, HttpTarget } from "../delivery/delivery.js";
import { json } from "../delivery/json-delivery.js";
import { sse } from "../delivery/stream-delivery.js";
import type { ChatUiHousekeeping } from "../chat-ui-housekeeping.js";
import { type ParameterPolicy, refuseUnsupported } from "../unsupported-parameters.js";
import { type Route, route } from "../route-table.js";
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
 * `POST /v1/chat/completions` (docs/chat-completions.md): the chat request read in the answer
 * routes' one order of checks (`answerInOrder`, docs/architecture/edge.md#the-order-of-checks); the
 * answer runner does the rest.
 */
export function chatCompletionsRoute(options: ChatRouteOptions): Route {
  const { config, runner } = options;
  const { documentPage, documentLinks } = options;
  const linkSettings = { template: config.answers.sourceUrlTemplate, documentPage, documentLinks };
  const citationDefaults = { annotations: config.answers.chatAnnotations, style: config.answers.citationStyle };
  const sweep = options.sweeps.of(config.answers.sseKeepAliveMs);

  /** A completion, or a stream of chunks (the JSON alone, for a structured answer), of the answer `id` names. */
  function deliveryOf(body: ChatCompletionRequest, target: HttpTarget, encoding: ChatEncoding, id: string): Delivering {
    const created = Math.floor(options.clock.now() / 1000);
    const meta = { id: completionId(id), created, model: body.model, choices: body.n ?? 1 };
    if (!body.stream) return { delivery: json(new ChatCompletionEncoder(meta, encoding), target), respondedAs: meta.id };
    const includeUsage = body.stream_options?.include_usage === true;
    return { delivery: sse(new ChatChunkEncoder(meta, encoding, includeUsage), target, sweep), respondedAs: meta.id };
  }

  const answer = answerInOrder<ChatCompletionRequest, ChatReading, ChatAsked, ChatFound>(
    {
      schema: chatCompletionRequestSchema(config.limits),
      read: ({ request }, { body, workspace }) => {
        // The citation format (`X-Citation-Style`, `X-Chat-Annotations`) and links of its answers.
        const { style: citationStyle, annotations } = chatCitationFormat(request, citationDefaults);
        const links = sourceLinker(linkSettings, workspace);
        const encoding = { stepsOutput: config.answers.stepsOutput, citationStyle, annotations, links };
        return { messages: plainMessages(body.messages), encoding };
      },
      housekeeping: ({ call, valid: { body }, read }) => {
        const task = options.housekeeping.localTask(read.messages, forcesChatToolCall(body));
        if (!task) return null;
        const id = options.ids.local();
        const prompt = plainMessages(body.messages.slice(-1))[0]?.text ?? "";
        const job = { prompt, text: localReply(task, asksChatJson(body)), choices: body.n ?? 1, id };
        return { task, job, delivery: deliveryOf(body, call, read.encoding, id).delivery };
      },
      refuse: ({ call, valid: { body }, read }) => {
        // What it asks in structure; its schema is checked (a 400) once admitted, before anything is asked (docs/structured-answers.md).
        const asked = readChatStructured(body);
        // A chat UI's housekeeping (a title, tags) is never a workspace turn: forcing a function on one is refused, not extracted.
        const housekeeping = asked?.kind === "function" && recognizeChatUiTask(read.messages) !== null;
        const unanswered = [...unansweredChatParameters(body), ...(housekeeping ? [HOUSEKEEPING_CALL] : [])];
        refuseUnsupported(unanswered, call.response, options.parameters);
        const structured = housekeeping ? null : asked;
        if (structured && (body.n ?? 1) > 1) {
          throw new InvalidRequestError("A structured answer has one choice: send n 1 (or leave it out).", { param: "n", code: "invalid_value" });
        }
        const markers = structured ? structuredMarkers(call.request, config.answers.structured.citations) : undefined;
        return { structured, markers };
      },
      // What it is expected to cost: its last user message, the prompt (a request without one is refused after admission).
      cost: ({ valid: { body, model }, read }) => {
        const question = read.messages.findLast((message) => message.role === "user")?.text ?? "";
        return { mode: model.mode, prompt: question, choices: body.n ?? 1 };
      },
      check: ({ asked }) => checkStructuredSchema(asked.structured, (value) => options.schemas.check(value)),
      continue: async ({ call, valid: { body, identity, workspace }, read }) => {
        const { prompt, messageIndex } = extractPrompt(body.messages);
        const scope = { principal: identity.principal, workspace };
        const conversationId = conversationIdFrom(call.request.headers, config.continuity.conversationIdHeaders);
        const hints = { conversationId, messages: read.messages };
        const choices = body.n ?? 1;
        const continueQueryId = body.query_id ?? (choices === 1 ? await options.threads.find(scope, hints) : null);
        return { prompt, messageIndex, scope, hints, continueQueryId };
      },
      run: async ({ call, valid: { body, identity, workspace, model }, read, asked, admission, found }) => {
        const { structured, markers } = asked;
        const { prompt, continueQueryId } = found;
        const input = { prompt, mode: model.mode, choices: body.n ?? 1, continueQueryId, createFields: body.query, structured };
        const spanStart = { operation: "chat", model: body.model, stream: body.stream === true } as const;
        const namesQuery = Boolean(body.query_id);
        const { meter } = admission;
        const planned = runner.plan({ context: call.context, identity, workspace, meter, input, namesQuery, spanStart, markers });
        const { queryId } = planned;
        const { delivery, respondedAs } = deliveryOf(body, call, structuredEncoding(read.encoding, structured, queryId), queryId);
        const turn = { promptIndex: found.messageIndex, queryId };
        await runner.run(planned, delivery, {
          respondedAs,
          remember: (sent) => options.threads.remember(found.scope, found.hints, { ...turn, answer: sent[0]?.content ?? "" }),
        });
      },
    },
    options,
  );
  return route("POST", "/v1/chat/completions", answer, chatCompletionsOperation);
}

/** A chat answer's delivery, and the id its client sees (`chatcmpl-…`). */
interface Delivering {
  delivery: Delivery<unknown>;
  respondedAs: string;
}

/** What the chat route reads of a request: its messages as plain text, and how its answers' citations are written. */
interface ChatReading {
  messages: PlainMessage[];
  encoding: ChatEncoding;
}

/** What a chat request asks in structure, and where its citation markers go. */
interface ChatAsked {
  structured: StructuredRequest | null;
  markers: "keep" | "strip" | undefined;
}

/** What a chat request continues: its prompt, the thread its history or conversation id names. */
interface ChatFound {
  prompt: string;
  messageIndex: number;
  scope: ThreadScope;
  hints: ThreadHints;
  continueQueryId: string | null;
}

/** The refusal of a forced function on a chat UI's housekeeping request (docs/chat-ui-tasks.md). */
const HOUSEKEEPING_CALL = {
  param: "tool_choice",
  message:
    "This is a chat UI's housekeeping request (a title, tags, follow-ups): the adapter answers these in text and never asks the workspace, so it cannot answer them as a forced function call. Send tool_choice 'auto' or leave it out.",
};
