import type { IncomingMessage } from "node:http";
import type { DocumentLinkSigning } from "../../answer/source-links.js";
import { localReply } from "../../chat-ui-tasks/local-reply.js";
import type { Config } from "../../config/config.js";
import type { BackgroundResponses } from "../../continuity/background/background-responses.js";
import type { ConversationsApi } from "../../continuity/conversations-api/conversations-api.js";
import type { StoredResponses } from "../../continuity/responses/stored-responses.js";
import type { StoredValue } from "../../dialects/responses/stored-value.js";
import type { ThreadMemory } from "../../continuity/threads/thread-memory.js";
import { ResponseBodyEncoder } from "../../dialects/responses/response-body-encoder.js";
import { ResponseStreamEncoder } from "../../dialects/responses/response-stream-encoder.js";
import { responseAnnotationFormat } from "../../dialects/responses/citation-choice.js";
import { type ReadInput, readInput } from "../../dialects/responses/read-input.js";
import { itemIdOf } from "../../dialects/responses/response-of.js";
import { type CitationFormat, metaOf, type ResponseMeta } from "../../dialects/responses/response-meta.js";
import { type ResponseRequest, responseRequestSchema } from "../../dialects/responses/response-request.js";
import { asksResponseJson, forcesResponseToolCall, unansweredResponseParameters } from "../../dialects/responses/unsupported-parameters.js";
import { readResponseStructured } from "../../dialects/responses/structured-request.js";
import { structuredMarkers } from "../../dialects/structured-markers.js";
import { checkStructuredSchema } from "../../dialects/structured-parameters.js";
import { InvalidRequestError } from "../../errors/adapter-error.js";
import type { StructuredRequest } from "../../structured/structured-request.js";
import type { TokenCounter } from "../../tokens/token-counter.js";
import { type AnswerCall, answerInOrder, type AnswerRouteOptions, type AnswerSteps, type EdgeSetting } from "../answer-request.js";
import type { ChatUiHousekeeping } from "../chat-ui-housekeeping.js";
import type { BeforeAnswerEnds, Delivery } from "../delivery/delivery.js";
import { json } from "../delivery/json-delivery.js";
import { sse } from "../delivery/stream-delivery.js";
import { type Continuation, continuationOf, type ContinuationStores } from "../responses/response-continuation.js";
import { type PlannedResponse, responseDelivery } from "../responses/response-delivery.js";
import type { Lifecycle } from "../lifecycle.js";
import type { RequestContexts } from "../request-contexts.js";
import { responsesSocket, responsesSocketOperation } from "./responses-socket.js";
import { ResponseTurns } from "../responses/response-turns.js";
import { type Route, type RouteCall, route } from "../route-table.js";
import { type ParameterPolicy, refuseUnsupported } from "../unsupported-parameters.js";
import { createResponseOperation } from "./answer-operations.js";
import { compactAndCountRoutes } from "./compact-and-count.js";
import { storedResponseRoutes } from "./stored-responses.js";

/** What the Responses routes need: the runner and the edge, and the continuity stores a response reads and writes. */
export interface ResponsesRouteOptions extends AnswerRouteOptions {
  config: Pick<Config, EdgeSetting | "answers" | "continuity">;
  /** Which workspace query a history continues, when the request names no response or conversation. */
  threads: ThreadMemory;
  stored: StoredResponses<StoredValue>;
  /** Background responses: their records and event logs, in process or shared (docs/responses-api.md#background-mode). */
  background: BackgroundResponses;
  /** The Conversations API's conversations: `conversation` continues one and adds the turn to its items. */
  conversations: ConversationsApi;
  /** Chat UIs' housekeeping, answered before planning (docs/chat-ui-tasks.md). */
  housekeeping: ChatUiHousekeeping;
  /** What becomes of parameters the workspace cannot honour (`LENIENT_PARAMETERS`). */
  parameters: ParameterPolicy;
  /** The base URL of the adapter's document page, when it serves one (the embedded workspace): the link of a `url_citation`. */
  documentPage?: (() => string) | undefined;
  /** Signs the links to that page where it asks for a key (listed keys). */
  documentLinks?: DocumentLinkSigning | undefined;
  /** The tokenizer `usage` counts with: `input_tokens` and a compaction count with it too. */
  tokens: TokenCounter;
  /** Makes the context of each message on a WebSocket (docs/responses-api.md#websocket-mode). */
  contexts: RequestContexts;
  /** Shutdown: a WebSocket closes when the adapter drains. */
  lifecycle: Lifecycle;
  /** Whether a request came as an upgrade (its socket is the route's to take), not as an ordinary request. */
  upgrading: (request: IncomingMessage) => boolean;
}

/**
 * How a response reaches its client, the one thing the Responses API's transports do not share: over
 * HTTP a body, a stream or a background answer; on a WebSocket (`responses-socket.ts`) a stream of
 * the same events into the socket, with the connection's own store-less responses to continue.
 */
export interface ResponseTransport<Call extends AnswerCall> {
  /** A local answer's delivery (a chat UI's housekeeping): never stored, never in the background. */
  local(body: ResponseRequest, meta: ResponseMeta, call: Call): Delivery<unknown>;
  /** A planned response's delivery, and what its answer remembers before its last bytes. */
  deliver(planned: Omit<PlannedResponse, "target" | "sweep">, call: Call): { delivery: Delivery<unknown>; remember: BeforeAnswerEnds };
  /** Where its continuation is looked up: the adapter's stores, and on a socket the connection's own responses first. */
  stores(call: Call): ContinuationStores;
}

/**
 * The steps of a Responses create in the answer routes' one order of checks (`answerInOrder`,
 * docs/architecture/edge.md#the-order-of-checks), whatever the transport: `POST /v1/responses`, or a
 * `response.create` message on a WebSocket (docs/responses-api.md#websocket-mode).
 */
export function responseCreateSteps<Call extends AnswerCall>(
  options: ResponsesRouteOptions,
  transport: ResponseTransport<Call>,
): AnswerSteps<ResponseRequest, ResponseReading, ResponseAsked, Continuation, Call> {
  const { config, runner } = options;
  const seconds = () => Math.floor(options.clock.now() / 1000);
  return {
    schema: responseRequestSchema(config.limits),
    read: ({ request }, { body, workspace }) => {
      const conversationId = refuseConflicts(body);
      const id = options.ids.response();
      // How its citations are written (docs/citations.md#the-responses-api): the format asked for, and its workspace's links.
      const format = responseAnnotationFormat(request, config.answers.responsesAnnotations);
      const documentPage = options.documentPage?.() ?? null;
      const links = { template: config.answers.sourceUrlTemplate ?? null, documentPage, workspace };
      return { conversationId, id, input: readInput(body.input, id), citations: { format, links } };
    },
    housekeeping: ({ call, valid: { body }, read: { id, input, citations } }) => {
      // A tool's result handed back is a turn of a workspace thread, never a chat UI's housekeeping.
      if (input.turn.kind !== "question") return null;
      // `instructions` is where a UI's system prompt travels on this API: part of the frame.
      const framed = body.instructions ? [{ role: "system", text: body.instructions }, ...input.messages] : input.messages;
      const task = options.housekeeping.localTask(framed, forcesResponseToolCall(body));
      if (!task) return null;
      // Answered by the adapter (docs/chat-ui-tasks.md), and not stored: no query a later response could continue.
      const meta = { ...metaOf(id, body, seconds(), null, citations), store: false };
      const job = { prompt: input.messages.at(-1)?.text ?? "", text: localReply(task, asksResponseJson(body)), choices: 1, id: options.ids.local() };
      return { task, job, delivery: transport.local(body, meta, call) };
    },
    refuse: ({ call, valid: { body } }) => {
      // What it asks in structure; what stays unanswerable refused (or, with `LENIENT_PARAMETERS=on`, ignored). In the
      // background too: the runner judges it there as anywhere (a replica taking it over refuses it).
      const structured = readResponseStructured(body);
      refuseUnsupported(unansweredResponseParameters(body), call.response, options.parameters);
      const markers = structured ? structuredMarkers(call.request, config.answers.structured.citations) : undefined;
      return { structured, markers };
    },
    cost: ({ valid: { model }, read }) => ({ mode: model.mode, prompt: read.input.prompt, choices: 1 }),
    check: ({ asked }) => checkStructuredSchema(asked.structured, (value) => options.schemas.check(value)),
    continue: ({ call, valid: { body, identity, workspace }, read }) => {
      const scope = { principal: identity.principal, workspace };
      const asked = { scope, previousResponseId: body.previous_response_id, conversationId: read.conversationId };
      return continuationOf(transport.stores(call), call.request, asked, read.input);
    },
    run: async ({ call, valid: { body, identity, workspace, model }, read, asked, admission, found }) => {
      const { structured, markers } = asked;
      const { id } = read;
      const { conversation, continueQueryId, prompt } = found;
      // A forced function is answered as its call: the output is one function_call item, whose result continues this thread.
      const forced = structured?.kind === "function" ? { call: { name: structured.name ?? "" } } : {};
      const echoed = { conversation, ...(body.background ? { background: true } : {}), ...forced };
      const meta = { ...metaOf(id, body, seconds(), found.previousResponseId, read.citations), ...echoed };
      const createFields = body.query;
      const plan = { prompt, mode: model.mode, choices: 1, continueQueryId, createFields, from: CREATE_FIELDS, structured };
      const spanStart = { operation: "chat", model: body.model, stream: body.stream === true } as const;
      const { meter } = admission;
      const planned = runner.plan({ context: call.context, identity, workspace, meter, input: plan, spanStart, markers });
      const scope = { principal: identity.principal, workspace };
      const turn = { id, ...scope, queryId: planned.queryId, meta, input: found.items, conversation };
      const promptIndex = read.input.messages.findLastIndex((message) => message.role === "user");
      const handles = meta.call ? [`call:${itemIdOf(meta, "call")}`] : [];
      const thread = { scope, hints: found.hints, promptIndex, handles };
      const { delivery, remember } = transport.deliver({ body, turn, mode: model.mode, prompt, thread, admission }, call);
      await runner.run(planned, delivery, { respondedAs: id, remember });
    },
  };
}

/**
 * The Responses API (docs/responses-api.md): `POST /v1/responses`, read in the answer routes' one
 * order of checks (`responseCreateSteps`), its WebSocket mode on `GET /v1/responses`
 * (`responses-socket.ts`), and the stored responses (`stored-responses.ts`). `previous_response_id`
 * (or an `item_reference` to a stored output item) continues the upstream query of that response's
 * chain; the answer runner does the rest — in the background too — and the turn and the response are
 * stored before the last bytes.
 */
export function responsesRoutes(options: ResponsesRouteOptions): Route[] {
  const { config } = options;
  const sweep = options.sweeps.of(config.answers.sseKeepAliveMs);
  const seconds = () => Math.floor(options.clock.now() / 1000);
  const turns = new ResponseTurns({ stored: options.stored, conversations: options.conversations, logger: options.logger });
  const delivering = { ...options, turns };

  const overHttp: ResponseTransport<RouteCall> = {
    local: (body, meta, target) => {
      const links = options.documentLinks;
      if (body.stream) return sse(new ResponseStreamEncoder(meta, seconds, links), target, sweep);
      return json(new ResponseBodyEncoder(meta, seconds, links), target);
    },
    deliver: (planned, target) => responseDelivery(delivering, { ...planned, target, sweep }),
    stores: () => options,
  };
  const create = answerInOrder(responseCreateSteps(options, overHttp), options);
  const socket = responsesSocket({ ...options, turns }, responseCreateSteps);

  return [
    route("POST", "/v1/responses", create, createResponseOperation),
    route("GET", "/v1/responses", socket.upgrade, responsesSocketOperation),
    // Before the stored responses: `/v1/responses/compact` is not a response id.
    ...compactAndCountRoutes(options),
    ...storedResponseRoutes({ ...options, turns }),
  ];
}

/** What the Responses route reads of a request: the conversation it names, its response's id, its input items, its citations. */
export interface ResponseReading {
  conversationId: string | undefined;
  id: string;
  input: ReadInput;
  citations: CitationFormat;
}

/** What a Responses request asks in structure, and where its citation markers go. */
export interface ResponseAsked {
  structured: StructuredRequest | null;
  markers: "keep" | "strip" | undefined;
}

/** Where a Responses request's create fields come from (the plan's message for a bad one). */
const CREATE_FIELDS = { choices: ["body"], createFields: ["body", "query"] };

/**
 * The conversation a request continues (`conversation`: an id or `{id}`), if any; refuses what
 * cannot go together (background without storing, a conversation and a previous response).
 */
function refuseConflicts(body: ResponseRequest): string | undefined {
  if (body.background === true && body.store === false) {
    throw new InvalidRequestError("Background mode requires store: true (a background response is retrieved later by its id)", { param: "background", code: "invalid_value" });
  }
  const conversation = body.conversation;
  const id = conversation === null || conversation === undefined ? undefined : typeof conversation === "string" ? conversation : conversation.id;
  if (id && body.previous_response_id) {
    throw new InvalidRequestError("Mutually exclusive parameters: give either previous_response_id or conversation, not both", {
      param: "conversation",
      code: "mutually_exclusive_parameters",
    });
  }
  return id;
}
