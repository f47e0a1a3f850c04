import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Config } from "../../config/config.js";
import { type ConversationHints, conversationIdFrom } from "../../continuity/conversations.js";
import { type BackgroundResume, StoredResponses, type Turn } from "../../continuity/stored-responses.js";
import type { ConversationItemsStore } from "../../continuity/conversation-items.js";
import { visibleConversation } from "./conversations.js";
import { ResponseBodyEncoder } from "../../dialects/responses/response-body-encoder.js";
import { ResponseStreamEncoder } from "../../dialects/responses/response-stream-encoder.js";
import { readInput } from "../../dialects/responses/read-input.js";
import { metaOf } from "../../dialects/responses/response-meta.js";
import { type ResponseRequest, responseRequestSchema } from "../../dialects/responses/response-request.js";
import { localReply } from "../../chat-ui-tasks/local-reply.js";
import { asksResponseJson, forcesResponseToolCall, unsupportedResponseParameters } from "../../dialects/responses/unsupported-parameters.js";
import type { ResponseStore } from "../../stores/response-store.js";
import type { RetryOutcome } from "../../util/retry-briefly.js";
import { admitValidRequest, type AnswerRouteOptions, answerHandler, type EdgeSetting, readAnswerRequest } from "../answer-request.js";
import { AnswerRunner, type Delivery, json, sse } from "../answer-runner.js";
import { admitHeld } from "../admission.js";
import { sendBackground, streamBackground } from "../background-delivery.js";
import type { BackgroundResponses } from "../../continuity/background-responses.js";
import type { BackgroundStore } from "../../continuity/background-store.js";
import { InvalidRequestError } from "../../errors/adapter-error.js";
import type { ChatUiHousekeeping } from "../chat-ui-housekeeping.js";
import type { Route } from "../route-table.js";
import { type ParameterPolicy, refuseUnsupported } from "../unsupported-parameters.js";
import { createResponseOperation } from "./answer-operations.js";
import { storedResponseRoutes } from "./stored-responses.js";

/** What the Responses routes need. */
export interface ResponsesRouteOptions extends AnswerRouteOptions {
  config: Pick<Config, EdgeSetting | "sseKeepAliveMs" | "conversationIdHeaders" | "responsesTtlSeconds" | "storeWriteWaitMs" | "conversationTtlSeconds">;
  responses: ResponseStore;
  newResponseId?: (() => string) | undefined;
  /** How each response's write went (metrics). */
  onStored?: ((outcome: RetryOutcome) => void) | undefined;
  /** A request was refused because the response store could not answer (metrics). */
  onStoreRefused?: (() => void) | undefined;
  /** Resolves when the store answers again after an outage: a failed write's cue to retry at once. */
  storeAnswersAgain?: (() => Promise<void>) | undefined;
  /** Background responses: their records and event logs, in process or shared (docs/responses-api.md#background-mode). */
  background: BackgroundResponses;
  /** Where background responses' records live (looked up by retrieve, cancel, delete). */
  backgroundRecords: Pick<BackgroundStore, "get" | "size" | "delete" | "events">;
  /** The Conversations API's conversations: `conversation` continues one and adds the turn to its items. */
  conversationItems: ConversationItemsStore;
  /** Chat UIs' housekeeping, answered before planning (docs/chat-ui-tasks.md). */
  housekeeping: ChatUiHousekeeping;
  /** What becomes of parameters the workspace cannot honour (`LENIENT_PARAMETERS`). */
  parameters: ParameterPolicy;
}

/**
 * The Responses API (docs/architecture.md#data-flow-of-one-request): `POST /v1/responses` on the
 * fast path, and the stored responses (`stored-responses.ts`). `previous_response_id` (or an
 * `item_reference` to a stored output item) continues the upstream query of that response's chain;
 * the answer runner does the rest, and the turn and the response are stored before the last bytes.
 */
export function responsesRoutes(options: ResponsesRouteOptions): Route[] {
  const { config } = options;
  const schema = responseRequestSchema(config);
  const runner = new AnswerRunner({ ...options, modeField: config.modeField, newQueryId: options.newQueryId ?? randomUUID });
  const newResponseId = options.newResponseId ?? (() => `resp_${randomUUID().replaceAll("-", "")}`);
  const sweep = options.sweeps.of(config.sseKeepAliveMs);
  const seconds = () => Math.floor(options.clock.now() / 1000);
  const stored = new StoredResponses({
    store: options.responses,
    clock: options.clock,
    logger: options.logger,
    ttlSeconds: config.responsesTtlSeconds,
    writeWaitMs: config.storeWriteWaitMs,
    onStored: options.onStored,
    onRefused: options.onStoreRefused,
    wake: options.storeAnswersAgain,
    conversationItems: options.conversationItems,
    conversationTtlSeconds: config.conversationTtlSeconds,
  });

  async function create(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const valid = await readAnswerRequest(request, schema, options);
    const background = valid.body.background === true;
    if (background && valid.body.store === false) {
      throw new InvalidRequestError("Background mode requires store: true (a background response is retrieved later by its id)", { param: "background", code: "invalid_value" });
    }
    const threadId = conversationIdOf(valid.body.conversation);
    if (threadId && valid.body.previous_response_id) {
      throw new InvalidRequestError("Mutually exclusive parameters: give either previous_response_id or conversation, not both", {
        param: "conversation",
        code: "mutually_exclusive_parameters",
      });
    }
    const id = newResponseId();
    const input = readInput(valid.body.input, id);
    // `instructions` is where a UI's system prompt travels on this API: part of the frame.
    const framed = valid.body.instructions ? [{ role: "system", text: valid.body.instructions }, ...input.messages] : input.messages;
    const task = options.housekeeping.localTask(framed, forcesResponseToolCall(valid.body));
    if (task) {
      // Answered by the adapter (docs/chat-ui-tasks.md), and not stored: no query a later response could continue.
      await admitValidRequest(response, valid, options, task);
      const text = localReply(task, asksResponseJson(valid.body));
      const prompt = input.messages.at(-1)?.text ?? "";
      const answer = options.answers.answerLocally({ prompt, text, choices: 1, id: `local-${randomUUID()}` });
      const meta = { ...metaOf(id, valid.body, seconds(), null), store: false };
      if (valid.body.stream) await runner.deliverLocal(response, answer, sse(new ResponseStreamEncoder(meta, seconds), sweep));
      else await runner.deliverLocal(response, answer, json(new ResponseBodyEncoder(meta, seconds)));
      return;
    }
    refuseUnsupported(unsupportedResponseParameters(valid.body), response, options.parameters);
    // A background answer holds its place under the caps and its key's slot until it ends (given
    // back with the response if the answer never reached the background runner).
    let handedOver = false;
    const held = background ? await admitHeld(response, valid.identity.principal, valid.workspace, options) : undefined;
    if (held) options.facts.whenClosed(response, () => handedOver || held.release());
    const admitted = held ? { ...valid, admission: held.meter } : await admitValidRequest(response, valid, options);
    const { identity, body, model, workspace, admission } = admitted;
    const { principal } = identity;
    const scope = { principal, workspace };
    const conversationId = conversationIdFrom(request.headers, config.conversationIdHeaders);
    const hints: ConversationHints = { conversationId, messages: input.messages };
    const { conversationItems, onStoreRefused } = options;
    const thread = threadId ? await visibleConversation(conversationItems, threadId, identity, workspace, "conversation", onStoreRefused) : null;
    const items = await stored.resolveReferences(input.items, principal, workspace);
    const previousId = body.previous_response_id;
    const previous = previousId ? await stored.visible(previousId, principal, workspace, "previous_response_id") : null;
    const referenced = previous ? null : items.lastReferenced;
    const continued = thread ?? previous?.entry ?? referenced;
    const continueQueryId = continued?.queryId ?? (await options.conversations.find(scope, hints));
    const from = { choices: ["body"], createFields: ["body", "query"] };
    const plan = { prompt: input.prompt, mode: model.mode, choices: 1, continueQueryId, createFields: body.query, from };
    const trace = { operation: "chat", model: body.model, stream: body.stream === true } as const;
    const conversation = thread?.id ?? null;
    const echoed = { conversation, ...(background ? { background: true } : {}) };
    const meta = { ...metaOf(id, body, seconds(), previous?.entry.id ?? null), ...echoed };
    const encoder = body.stream || background ? new ResponseStreamEncoder(meta, seconds) : new ResponseBodyEncoder(meta, seconds);
    const promptIndex = input.messages.findLastIndex((message) => message.role === "user");
    // A background answer is not the client's to stop by leaving: only a cancel stops it.
    const controller = new AbortController();
    const answerController = background ? controller : undefined;
    const order = { response, identity, workspace, meter: admission, input: plan, trace, controller: answerController };
    const turnOf = (queryId: string): Turn => ({ id, principal, workspace, queryId, meta, input: items.resolved, conversation });
    const deliveryOf = (queryId: string): Delivery<unknown> => {
      if (encoder instanceof ResponseBodyEncoder) return json(encoder);
      return background ? backgroundDelivery(encoder, queryId) : sse(encoder, sweep);
    };
    await runner.run(order, ([queryId = ""]) => ({
      delivery: deliveryOf(queryId),
      respondedAs: id,
      remember: async (sent) => {
        const remembered = options.conversations.remember(scope, hints, { promptIndex, answer: sent[0]?.content ?? "", queryId });
        await Promise.all([remembered, stored.storeTurn(turnOf(queryId), encoder)]);
      },
    }));

    /**
     * The background delivery (docs/responses-api.md#background-mode): the stream encoder's frames go
     * to the event log any replica follows; the client gets the response in progress at once, or
     * follows the log when it asked for a stream.
     */
    function backgroundDelivery(streamEncoder: ResponseStreamEncoder, queryId: string): Delivery<void> {
      return {
        reportsUsage: true,
        namesQueries: true,
        async deliver(run, context) {
          const resume: BackgroundResume = { mode: model.mode, prompt: input.prompt, turn: turnOf(queryId) };
          const record = { id, principal, workspace, queryId, response: streamEncoder.current(null), resume };
          const answer = { ...run.answer, usage: run.usage };
          const beforeEnd = run.remember ?? (async () => undefined);
          const release = held?.release ?? (() => undefined);
          const job = { record, answer, encoder: streamEncoder, controller, beforeEnd, release };
          handedOver = true;
          await options.background.start(job);
          if (body.stream) await streamBackground(response, options.background, id, -1, { ...context, sweep });
          else sendBackground(response, record.response);
        },
      };
    }
  }

  return [
    { method: "POST", path: "/v1/responses", handler: { fast: answerHandler(create, options) }, operation: createResponseOperation },
    ...storedResponseRoutes({ ...options, stored }),
  ];
}

/** The id of the conversation a request continues (`conversation`: an id or `{id}`), if any. */
function conversationIdOf(conversation: ResponseRequest["conversation"]): string | undefined {
  if (conversation === null || conversation === undefined) return undefined;
  return typeof conversation === "string" ? conversation : conversation.id;
}
