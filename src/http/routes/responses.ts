import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Request, RequestHandler } from "express";
import type { TokenUsage } from "../../answer/answer-events.js";
import type { Identity } from "../../auth/authenticate.js";
import type { Config } from "../../config/config.js";
import { type ConversationHints, conversationIdFrom } from "../../conversations/conversations.js";
import { ResponseBodyEncoder, type ResponseMeta, ResponseStreamEncoder, resumeStreamEncoder } from "../../dialects/responses/encode-response.js";
import { type ReadInput, readInput, type StoredInputItem } from "../../dialects/responses/read-input.js";
import type { ResponseObject } from "../../dialects/responses/response-object.js";
import { RESPONSE_ID, type ResponseRequest, responseRequestSchema } from "../../dialects/responses/response-request.js";
import { ContinuationUnavailableError, InvalidRequestError, NotFoundError } from "../../errors/adapter-error.js";
import type { BackgroundRecord, BackgroundStore } from "../../continuity/background-store.js";
import { type BackgroundResponses, hasEnded } from "../../continuity/background-responses.js";
import type { Mode } from "../../core/modes.js";
import { readStartingAfter, sendBackground, streamBackground } from "../background-delivery.js";
import { type ChatUiTask, taskName } from "../../chat-ui-tasks/chat-ui-task.js";
import { localReply } from "../../chat-ui-tasks/local-reply.js";
import { asksResponseJson, forcesResponseToolCall, unsupportedResponseParameters } from "../../dialects/responses/unsupported-parameters.js";
import { planQueries } from "../../plan/plan-queries.js";
import type { ResponseStore, StoredEntry } from "../../stores/response-store.js";
import { type AdmittedRequest, admitBackground, admitValidRequest, type AnswerRouteOptions, answerHandler, readAnswerRequest, traceChat, type ValidAnswerRequest } from "../answer-request.js";
import type { ChatUiHousekeeping } from "../chat-ui-housekeeping.js";
import { type ParameterPolicy, refuseUnsupported } from "../unsupported-parameters.js";
import { errorResponse, workspaceHeader } from "../openapi.js";
import { abortWhenClientLeaves } from "../request-body.js";
import type { Route } from "../route-table.js";
import { formatFrame } from "../sse-writer.js";
import { type RetryOutcome, writeBriefly } from "../../util/retry-briefly.js";
import { pageOf, readListQuery } from "../list-query.js";
import type { ConversationItemsStore } from "../../continuity/conversation-items.js";
import { visibleConversation } from "./conversations.js";
import { type BeforeAnswerEnds, sendAnswer, streamAnswer } from "../write-answer.js";

/** What the Responses routes need. */
export interface ResponsesRouteOptions extends AnswerRouteOptions {
  config: Pick<
    Config,
    | "maxMessages"
    | "maxJsonDepth"
    | "bodyLimitBytes"
    | "defaultWorkspace"
    | "modeField"
    | "sseKeepAliveMs"
    | "conversationIdHeaders"
    | "responsesTtlSeconds"
    | "storeWriteWaitMs"
    | "conversationTtlSeconds"
  >;
  responses: ResponseStore;
  newResponseId?: (() => string) | undefined;
  /** How each response's write went (metrics). */
  onStored?: ((outcome: RetryOutcome) => void) | undefined;
  /** A request was refused because the response store could not answer (metrics). */
  onStoreRefused?: (() => void) | undefined;
  /** Resolves when the store answers again after an outage: a failed write's cue to retry at once. */
  storeAnswersAgain?: (() => Promise<void>) | undefined;
  /** Chat UIs' housekeeping, answered before planning (docs/chat-ui-tasks.md). */
  housekeeping: ChatUiHousekeeping;
  /** What becomes of parameters the workspace cannot honour (`LENIENT_PARAMETERS`). */
  parameters: ParameterPolicy;
  /** Background responses: their records and event logs, in process or shared (docs/responses-api.md#background-mode). */
  background: BackgroundResponses;
  /** Where background responses' records live (looked up by retrieve, cancel, delete). */
  backgroundRecords: Pick<BackgroundStore, "get" | "size" | "delete" | "events">;
  /** The Conversations API's conversations: `conversation` continues one and adds the turn to its items. */
  conversationItems: ConversationItemsStore;
}

/** What a stored response keeps beside its object: its input, and the answer to replay its events from. */
interface StoredValue {
  response: ResponseObject;
  input: StoredInputItem[];
  meta: ResponseMeta;
  answer: ResponseBodyEncoder["answer"];
  usage: TokenUsage;
}

/** A turn to store once its answer is whole: the response's identity and echo, its input, its conversation. */
interface Turn {
  id: string;
  principal: string;
  workspace: string;
  queryId: string;
  meta: ResponseMeta;
  input: StoredInputItem[];
  conversation: string | null;
}

/** What a background response's record keeps for a replica that takes its answer over. */
interface BackgroundResume {
  mode: Mode;
  prompt: string;
  turn: Turn;
}

/**
 * The Responses API (docs/architecture.md#data-flow-of-one-request): `POST /v1/responses` on the
 * fast path, and the stored responses — retrieve (with `stream=true` replaying the events), delete,
 * list input items. `previous_response_id` (or an `item_reference` to a stored output item)
 * continues the upstream query of that response's chain.
 */
export function responsesRoutes(options: ResponsesRouteOptions): Route[] {
  const { config, facts, responses } = options;
  const schema = responseRequestSchema(config);
  const newQueryId = options.newQueryId ?? randomUUID;
  const newResponseId = options.newResponseId ?? (() => `resp_${randomUUID().replaceAll("-", "")}`);
  const sweep = options.sweeps.of(config.sseKeepAliveMs);
  const streamContext = { sweep, facts, lifecycle: options.lifecycle, logger: options.logger };
  const seconds = () => Math.floor(options.clock.now() / 1000);

  /** A stored response this caller may see: created with the same credential, in the workspace the request names (if it names one). */
  async function visible(id: string, identity: Identity, workspace: string | undefined, param: string): Promise<StoredEntry> {
    const entry = RESPONSE_ID.test(id) ? await lookup(() => responses.get(id), `'${id}'`) : null;
    if (!entry || entry.principal !== identity.principal || (workspace !== undefined && entry.workspace !== workspace)) {
      throw new NotFoundError(`No response with id '${id}' was found`, { param, code: "response_not_found" });
    }
    return entry;
  }

  /**
   * A store lookup. The store failing is not "not found": a continuation answered as a fresh chain
   * would lose its context (docs/architecture.md#redis-down-or-slow), so it is a 503 to retry.
   */
  async function lookup<T>(find: () => Promise<T | null>, what: string): Promise<T | null> {
    try {
      return await find();
    } catch (error) {
      options.logger.warn({ err: { message: (error as Error).message } }, "response store lookup failed: the request is refused");
      options.onStoreRefused?.();
      throw new ContinuationUnavailableError(`The stored response ${what}`, "response_store_unavailable", error);
    }
  }

  /** A background response this caller may see (the same rule as stored responses'), or null when there is none of that id. */
  async function visibleBackground(id: string, identity: Identity, workspace?: string): Promise<BackgroundRecord | null> {
    const record = RESPONSE_ID.test(id) ? await lookup(() => options.backgroundRecords.get(id), `'${id}'`) : null;
    const mine = record && record.principal === identity.principal && (workspace === undefined || record.workspace === workspace);
    return mine ? record : null;
  }

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
    if (task) return answerChatUiTask(response, valid, task, id, input);
    refuseUnsupported(unsupportedResponseParameters(valid.body), response, options.parameters);
    // A background answer holds its place under the caps and its key's slot until it ends (given
    // back with the response if the answer never reached the background runner).
    let handedOver = false;
    let release = () => undefined as void;
    let admitted: AdmittedRequest<ResponseRequest>;
    if (background) {
      ({ admitted, release } = await admitBackground(response, valid, options));
      facts.whenClosed(response, () => handedOver || release());
    } else {
      admitted = await admitValidRequest(response, valid, options);
    }
    const { identity, body, model, workspace, admission } = admitted;
    const trace = traceChat(response, facts, admitted);
    trace?.respondedAs(id);
    const scope = { principal: identity.principal, workspace };
    const conversationId = conversationIdFrom(request.headers, config.conversationIdHeaders);
    const hints: ConversationHints = { conversationId, messages: input.messages };
    const { conversationItems, onStoreRefused } = options;
    const thread = threadId ? await visibleConversation(conversationItems, threadId, identity, workspace, "conversation", onStoreRefused) : null;
    const items = await resolveReferences(input.items, identity, workspace);
    const previous = body.previous_response_id ? await visible(body.previous_response_id, identity, workspace, "previous_response_id") : null;
    const referenced = previous ? null : items.lastReferenced;
    const continueQueryId = (thread ?? previous ?? referenced)?.queryId ?? (await options.conversations.find(scope, hints));
    const plan = planQueries(
      { prompt: input.prompt, mode: model.mode, choices: 1, continueQueryId, createFields: body.query, from: { choices: ["body"], createFields: ["body", "query"] } },
      { modeField: config.modeField, newQueryId },
    );
    const queryId = plan.queries[0]?.queryId as string;
    Object.assign(facts.of(response), { workspace, mode: model.mode, queryIds: [queryId], continued: plan.continued });
    response.setHeader("service-query-id", queryId);
    // A background answer is not the client's to stop by leaving: only a cancel stops it.
    const controller = background ? new AbortController() : abortWhenClientLeaves(response, facts);
    const answer = admission.meter(
      await options.answers.start({
        plan,
        caller: { credential: identity.upstreamCredential, workspace, credentialKey: identity.upstreamKey },
        controller,
        countsUsage: true,
        trace,
      }),
    );
    const echoed = { conversation: thread?.id ?? null, ...(background ? { background: true } : {}) };
    const meta = { ...metaOf(id, body, seconds(), previous?.id ?? null), ...echoed };
    const encoder = body.stream || background ? new ResponseStreamEncoder(meta, seconds) : new ResponseBodyEncoder(meta, seconds);
    const promptIndex = input.messages.findLastIndex((message) => message.role === "user");
    const conversation = thread?.id ?? null;
    const turn: Turn = { id, principal: identity.principal, workspace, queryId, meta, input: items.resolved, conversation };
    const remember: BeforeAnswerEnds = async (sent) => {
      const remembered = options.conversations.remember(scope, hints, { promptIndex, answer: sent[0]?.content ?? "", queryId });
      await Promise.all([remembered, storeTurn(turn, encoder)]);
    };
    if (background && encoder instanceof ResponseStreamEncoder) {
      // The background delivery: the stream encoder's frames go to the event log any replica follows.
      const resume: BackgroundResume = { mode: model.mode, prompt: input.prompt, turn };
      const record = { id, principal: identity.principal, workspace, queryId, response: encoder.current(null), resume };
      handedOver = true;
      await options.background.start({ record, answer, encoder, controller, beforeEnd: remember, release });
      if (body.stream) await streamBackground(response, options.background, id, -1, streamContext);
      else sendBackground(response, record.response);
      return;
    }
    if (encoder instanceof ResponseStreamEncoder) await streamAnswer(response, answer, encoder, streamContext, remember);
    else await sendAnswer(response, answer, encoder, remember);
  }

  /**
   * Stores a finished turn (docs/architecture.md#redis-down-or-slow): the response, when `store`,
   * for `previous_response_id` and retrieval; its input and output as its conversation's items.
   */
  async function storeTurn(turn: Turn, encoder: ResponseBodyEncoder | ResponseStreamEncoder): Promise<void> {
    const { id, queryId, meta, input } = turn;
    const finished = encoder.finished;
    // The turn's input and output become the conversation's items (docs/responses-api.md#conversations).
    const threadTurn = turn.conversation && finished ? appendTurn(turn.conversation, [...input, ...finished.output]) : undefined;
    if (!meta.store || !finished || !encoder.usage) {
      await threadTurn;
      return;
    }
    const value: StoredValue = { response: finished, input, meta, answer: encoder.answer, usage: encoder.usage };
    const itemIds = finished.output.map((item) => item.id);
    const entry = { id, principal: turn.principal, workspace: turn.workspace, queryId, itemIds, value };
    const stored = writeBriefly(() => responses.put(entry, config.responsesTtlSeconds), {
      clock: options.clock,
      wake: options.storeAnswersAgain,
      waitMs: config.storeWriteWaitMs,
      onOutcome: options.onStored,
      onLost: (error) => options.logger.warn({ responseId: id, queryId, err: { message: (error as Error).message } }, "response could not be stored"),
    });
    await Promise.all([stored, threadTurn]);
  }

  /**
   * A background answer whose replica is gone (its lease ran out) is taken over by this one on a
   * retrieve: the encoder is brought to the end of the log, and the workspace query, the truth, is
   * followed from there with the retrieving caller's credential (the same key: it may see the
   * response). Nothing happens while the replica that runs it renews its lease.
   */
  async function takeOverIfGone(record: BackgroundRecord, identity: Identity): Promise<void> {
    const resume = record.resume as BackgroundResume;
    let release: () => void;
    try {
      // The answer takes a place under this replica's caps; when there is none now, a later retrieve tries again.
      release = options.limit.acquire(record.workspace);
    } catch {
      return;
    }
    try {
      const taken = await options.background.takeOver(record, async () => {
        const frames = await options.backgroundRecords.events(record.id, -1);
        const encoder = resumeStreamEncoder(resume.turn.meta, seconds, frames);
        if (!encoder) throw new Error("its event log ends where the answer cannot be carried on (after its citations)");
        const [sent] = encoder.sent();
        const controller = new AbortController();
        const answer = options.answers.follow({
          queryId: record.queryId,
          prompt: resume.prompt,
          mode: resume.mode,
          sent: { text: sent?.content ?? "", reasoning: sent?.reasoning ?? "" },
          caller: { credential: identity.upstreamCredential, workspace: record.workspace, credentialKey: identity.upstreamKey },
          controller,
          countsUsage: true,
        });
        const beforeEnd = () => storeTurn(resume.turn, encoder);
        return { record, answer, encoder, controller, beforeEnd, release };
      });
      if (!taken) release();
    } catch (error) {
      release();
      options.logger.warn({ responseId: record.id, err: { message: (error as Error).message } }, "background answer could not be taken over");
    }
  }

  /**
   * A running background response with what its answer has sent so far (its output items, still in
   * progress), read from its event log; the record's object when the log cannot say more.
   */
  async function progressOf(record: BackgroundRecord): Promise<object> {
    const frames = await lookup(() => options.backgroundRecords.events(record.id, -1), `'${record.id}'`);
    const encoder = resumeStreamEncoder((record.resume as BackgroundResume).turn.meta, seconds, frames ?? []);
    return encoder ? encoder.current(null) : record.response;
  }

  /** Adds a turn's items to its conversation; a failure is logged (the answer is not lost for it). */
  async function appendTurn(conversationId: string, turnItems: object[]): Promise<void> {
    const ttl = config.conversationTtlSeconds;
    try {
      const added = await options.conversationItems.append(conversationId, turnItems as StoredInputItem[], ttl);
      if (!added) options.logger.warn({ conversationId }, "conversation gone before its turn was added");
    } catch (error) {
      options.logger.warn({ conversationId, err: { message: (error as Error).message } }, "conversation turn could not be stored");
    }
  }

  /**
   * A chat UI's housekeeping, answered by the adapter (docs/chat-ui-tasks.md): no workspace query,
   * no conversation looked up or remembered, not counted against the key's rate limits, and not
   * stored (the response says `store: false`: there is no query a later response could continue).
   */
  async function answerChatUiTask(
    response: ServerResponse,
    valid: ValidAnswerRequest<ResponseRequest>,
    task: ChatUiTask,
    id: string,
    input: ReadInput,
  ): Promise<void> {
    const { body, model, workspace } = valid;
    facts.whenClosed(response, options.limit.acquire(workspace));
    Object.assign(facts.of(response), { workspace, mode: model.mode, chatUiTask: taskName(task) });
    response.setHeader("service-chat-ui-task", taskName(task));
    const prompt = input.messages.at(-1)?.text ?? "";
    const answer = options.answers.answerLocally({ prompt, text: localReply(task, asksResponseJson(body)), choices: 1, id: `local-${randomUUID()}` });
    const meta = { ...metaOf(id, body, seconds(), null), store: false };
    if (body.stream) await streamAnswer(response, answer, new ResponseStreamEncoder(meta, seconds), streamContext);
    else await sendAnswer(response, answer, new ResponseBodyEncoder(meta, seconds));
  }

  /**
   * `item_reference`s resolved to the stored items they name (an unknown or foreign one is a 404:
   * silently dropping part of the conversation would alter it), and the last response referenced.
   */
  async function resolveReferences(
    items: StoredInputItem[],
    identity: Identity,
    workspace: string,
  ): Promise<{ resolved: StoredInputItem[]; lastReferenced: StoredEntry | null }> {
    let lastReferenced: StoredEntry | null = null;
    const resolved: StoredInputItem[] = [];
    for (const [index, item] of items.entries()) {
      if (item.type !== "item_reference") {
        resolved.push(item);
        continue;
      }
      const entry = await lookup(() => responses.findByItem(item.id), `of item '${item.id}'`);
      const stored = entry && entry.principal === identity.principal && entry.workspace === workspace ? entry : null;
      const found = (stored?.value as StoredValue | undefined)?.response.output.find((output) => output.id === item.id);
      if (!stored || !found) {
        throw new NotFoundError(`No stored item with id '${item.id}' was found (input.${index})`, { param: "input", code: "item_not_found" });
      }
      lastReferenced = stored;
      resolved.push(found as unknown as StoredInputItem);
    }
    return { resolved, lastReferenced };
  }

  const requestWorkspace = (request: Request): string | undefined => {
    const header = request.headers["service-workspace"];
    return typeof header === "string" && header !== "" ? header : undefined;
  };
  const entryOf = (request: Request) =>
    visible((request.params as { id: string }).id, options.authenticate(request), requestWorkspace(request), "response_id");

  const backgroundOf = (request: Request) =>
    visibleBackground((request.params as { id: string }).id, options.authenticate(request), requestWorkspace(request));

  const retrieve: RequestHandler = async (request, response) => {
    const record = await backgroundOf(request);
    if (record) {
      const orphan = !hasEnded(record.response) && !options.background.runsHere(record.id);
      if (orphan) await takeOverIfGone(record, options.authenticate(request));
      if (request.query.stream !== "true") {
        sendBackground(response, hasEnded(record.response) ? record.response : await progressOf(record));
        return;
      }
      const after = readStartingAfter(request.query.starting_after);
      const size = await lookup(() => options.backgroundRecords.size(record.id), `'${record.id}'`);
      if (after >= (size ?? 0)) {
        throw new InvalidRequestError(`starting_after ${after} is beyond the last event of response '${record.id}' (${(size ?? 0) - 1})`, {
          param: "starting_after",
          code: "invalid_value",
        });
      }
      await streamBackground(response, options.background, record.id, after, streamContext);
      return;
    }
    const entry = await entryOf(request);
    const value = entry.value as StoredValue;
    if (request.query.stream !== "true") {
      response.json(value.response);
      return;
    }
    const after = readStartingAfter(request.query.starting_after);
    response.status(200).setHeader("content-type", "text/event-stream; charset=utf-8");
    response.setHeader("cache-control", "no-cache, no-store");
    for (const frame of replay(value)) {
      if ((frame.data as { sequence_number: number }).sequence_number > after) response.write(formatFrame(frame));
    }
    response.end();
  };

  const remove: RequestHandler = async (request, response) => {
    const record = await backgroundOf(request);
    if (record) {
      await Promise.all([options.backgroundRecords.delete(record.id), responses.delete(record.id)]);
      response.json({ id: record.id, object: "response", deleted: true });
      return;
    }
    const entry = await entryOf(request);
    await responses.delete(entry.id);
    response.json({ id: entry.id, object: "response", deleted: true });
  };

  /** Cancels a background response from any replica: the cancelled object; again, the same; a finished one is a 400. */
  const cancel: RequestHandler = async (request, response) => {
    const record = await backgroundOf(request);
    if (!record) {
      const entry = await entryOf(request);
      throw new InvalidRequestError(`Response '${entry.id}' was not created with background: true; only background responses can be cancelled`, {
        param: "response_id",
        code: "invalid_value",
      });
    }
    const outcome = await options.background.cancel(record);
    if (!outcome.cancelled && outcome.response.status !== "cancelled") {
      throw new InvalidRequestError(`Response '${record.id}' has already ended (${outcome.response.status}); only a response in progress can be cancelled`, {
        param: "response_id",
        code: "invalid_value",
      });
    }
    response.setHeader("cache-control", "no-store");
    response.json(outcome.response);
  };

  const inputItems: RequestHandler = async (request, response) => {
    const entry = await entryOf(request);
    response.json(pageOf((entry.value as StoredValue).input, readListQuery(request), "input item"));
  };

  const bearer = [{ bearer: [] }];
  const idParameter = { name: "id", in: "path", required: true, schema: { type: "string" } };
  return [
    {
      method: "POST",
      path: "/v1/responses",
      handler: { fast: answerHandler(create, options) },
      operation: {
        summary: "Answer from the workspace as an OpenAI response: JSON, or a stream of named events",
        security: bearer,
        parameters: [workspaceHeader],
        requestBody: { required: true, content: { "application/json": { schema: { $ref: "#/components/schemas/ResponseRequest" } } } },
        responses: {
          "200": {
            description: "A response, or with `stream: true` server-sent events from `response.created` to `response.completed`",
            content: {
              "application/json": { schema: { $ref: "#/components/schemas/Response" } },
              "text/event-stream": { schema: { type: "object" } },
            },
          },
          "400": errorResponse("Asks for what the workspace cannot do: JSON that follows a schema or a JSON object, a forced tool call (`param` names it; `LENIENT_PARAMETERS=on` ignores them instead)"),
          "401": errorResponse("No bearer credential, or one the upstream refused"),
          "404": errorResponse("`previous_response_id` names no response of this credential and workspace"),
          "422": errorResponse("Invalid request (FastAPI-style `detail` list)"),
          "429": errorResponse("Over a rate limit of this key in the workspace (`retry-after`, `retry-after-ms`), too many requests in flight here, or upstream"),
          "502": errorResponse("The query FAILED, or the upstream failed or could not be reached"),
          "504": errorResponse("The query did not finish before its mode's deadline"),
        },
      },
    },
    {
      method: "GET",
      path: "/v1/responses/{id}",
      handler: { express: retrieve },
      operation: {
        summary: "A stored response; with `stream=true`, its events replayed (after `starting_after`)",
        security: bearer,
        parameters: [idParameter, { name: "stream", in: "query", schema: { type: "boolean" } }, { name: "starting_after", in: "query", schema: { type: "integer" } }],
        responses: {
          "200": { description: "The response", content: { "application/json": { schema: { $ref: "#/components/schemas/Response" } } } },
          "404": errorResponse("No such response for this credential and workspace"),
        },
      },
    },
    {
      method: "DELETE",
      path: "/v1/responses/{id}",
      handler: { express: remove },
      operation: {
        summary: "Deletes a stored response",
        security: bearer,
        parameters: [idParameter],
        responses: { "200": { description: "`{id, object: \"response\", deleted: true}`" }, "404": errorResponse("No such response") },
      },
    },
    {
      method: "POST",
      path: "/v1/responses/{id}/cancel",
      handler: { express: cancel },
      operation: {
        summary: "Cancels a background response, from any replica: its object, now `cancelled` (the upstream query is not stopped: the interface has no cancel)",
        security: bearer,
        parameters: [idParameter],
        responses: {
          "200": { description: "The cancelled response", content: { "application/json": { schema: { $ref: "#/components/schemas/Response" } } } },
          "400": errorResponse("The response was not created with `background: true`, or has already ended"),
          "404": errorResponse("No such response for this credential and workspace"),
        },
      },
    },
    {
      method: "GET",
      path: "/v1/responses/{id}/input_items",
      handler: { express: inputItems },
      operation: {
        summary: "The input items of a stored response, as OpenAI's list (`order`, `after`, `limit`)",
        security: bearer,
        parameters: [
          idParameter,
          { name: "order", in: "query", schema: { type: "string", enum: ["asc", "desc"] } },
          { name: "after", in: "query", schema: { type: "string" } },
          { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 100 } },
        ],
        responses: { "200": { description: "A list of items" }, "404": errorResponse("No such response") },
      },
    },
  ];
}

/** The response's echo of its request: what applies is echoed, OpenAI's defaults otherwise. */
function metaOf(id: string, body: ResponseRequest, createdAt: number, previousResponseId: string | null): ResponseMeta {
  const reasoning = body.reasoning ?? {};
  return {
    id,
    createdAt,
    model: body.model,
    instructions: body.instructions ?? null,
    previousResponseId,
    store: body.store !== false,
    metadata: body.metadata ?? {},
    temperature: body.temperature ?? 1,
    topP: body.top_p ?? 1,
    maxOutputTokens: body.max_output_tokens ?? null,
    parallelToolCalls: body.parallel_tool_calls ?? true,
    user: body.user ?? null,
    truncation: body.truncation ?? "disabled",
    tools: body.tools ?? [],
    toolChoice: body.tool_choice ?? "auto",
    reasoning: {
      effort: typeof reasoning.effort === "string" ? reasoning.effort : null,
      summary: typeof reasoning.summary === "string" ? reasoning.summary : null,
    },
  };
}

/** A stored response's events, as its stream sent them, from its answer (one delta per item). */
function replay(value: StoredValue) {
  const encoder = new ResponseStreamEncoder(value.meta, () => value.response.completed_at ?? value.meta.createdAt);
  const { reasoning, text, citations, sources } = value.answer;
  return [
    ...encoder.open(),
    ...(reasoning ? encoder.encode({ type: "reasoning", choice: 0, text: reasoning, steps: [reasoning] }) : []),
    ...(text ? encoder.encode({ type: "text", choice: 0, text }) : []),
    ...encoder.encode({ type: "cited", choice: 0, citations, sources }),
    ...encoder.close(value.usage),
  ];
}

/** The conversation id `conversation` names (a string or `{id}`), if any. */
function conversationIdOf(conversation: ResponseRequest["conversation"]): string | undefined {
  if (conversation === null || conversation === undefined) return undefined;
  return typeof conversation === "string" ? conversation : conversation.id;
}
