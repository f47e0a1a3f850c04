import type { IncomingMessage, ServerResponse } from "node:http";
import type { ChoiceSent } from "../../answer/answer-events.js";
import { localReply } from "../../chat-ui-tasks/local-reply.js";
import type { ChatUiTask } from "../../chat-ui-tasks/chat-ui-task.js";
import type { DocumentLinkSigning } from "../../answer/source-links.js";
import type { Config } from "../../config/config.js";
import type { BackgroundResponses } from "../../continuity/background/background-responses.js";
import type { BackgroundResume } from "../../continuity/background/responses-resumption.js";
import type { ConversationsApi } from "../../continuity/conversations-api/conversations-api.js";
import type { FinishedAnswer, StoredResponses, Turn } from "../../continuity/responses/stored-responses.js";
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
import { admitValidRequest, type AnswerRouteOptions, answerHandler, type EdgeSetting, readAnswerRequest, type ValidAnswerRequest } from "../answer-request.js";
import type { Admitted } from "../admission.js";
import type { ChatUiHousekeeping } from "../chat-ui-housekeeping.js";
import { background } from "../delivery/background-delivery.js";
import type { Delivery } from "../delivery/delivery.js";
import { json } from "../delivery/json-delivery.js";
import { sse } from "../delivery/stream-delivery.js";
import type { TokenCounter } from "../../tokens/token-counter.js";
import type { Route } from "../route-table.js";
import { type ParameterPolicy, refuseUnsupported } from "../unsupported-parameters.js";
import { createResponseOperation } from "./answer-operations.js";
import { compactAndCountRoutes } from "./compact-and-count.js";
import { continuationOf } from "./response-continuation.js";
import { storedResponseRoutes } from "./stored-responses.js";

/** What the Responses routes need: the runner and the edge, and the continuity stores a response reads and writes. */
export interface ResponsesRouteOptions extends AnswerRouteOptions {
  config: Pick<Config, EdgeSetting | "answers" | "continuity">;
  /** Which workspace query a history continues, when the request names no response or conversation. */
  threads: ThreadMemory;
  stored: StoredResponses;
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
}

/**
 * The Responses API (docs/architecture.md#data-flow-of-one-request): `POST /v1/responses` on the
 * fast path, and the stored responses (`stored-responses.ts`). A request is read, admitted, then its
 * schema checked (docs/structured-answers.md#the-schema-is-untrusted), then continued. `previous_response_id` (or an
 * `item_reference` to a stored output item) continues the upstream query of that response's chain;
 * the answer runner does the rest — in the background too — and the turn and the response are
 * stored before the last bytes.
 */
export function responsesRoutes(options: ResponsesRouteOptions): Route[] {
  const { config, runner, stored } = options;
  const schema = responseRequestSchema(config.limits);
  const sweep = options.sweeps.of(config.answers.sseKeepAliveMs);
  const seconds = () => Math.floor(options.clock.now() / 1000);

  async function create(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const valid = await readAnswerRequest(request, schema, options);
    const { body } = valid;
    const conversationId = refuseConflicts(body);
    const id = options.ids.response();
    const input = readInput(body.input, id);
    const citations = citationsOf(request, valid.workspace);
    // `instructions` is where a UI's system prompt travels on this API: part of the frame.
    const framed = body.instructions ? [{ role: "system", text: body.instructions }, ...input.messages] : input.messages;
    // A tool's result handed back is a turn of a workspace thread, never a chat UI's housekeeping.
    const task = input.turn.kind === "question" ? options.housekeeping.localTask(framed, forcesResponseToolCall(body)) : null;
    if (task) return answerTask(response, valid, task, id, input, citations);
    const structured = structuredOf(body, response);
    const markers = structured ? structuredMarkers(request, config.answers.structured.citations) : undefined;
    const cost = { mode: valid.model.mode, prompt: input.prompt, choices: 1 };
    const admitted = await admitValidRequest(response, valid, options, { cost });
    checkStructuredSchema(structured, (value) => options.schemas.check(value));
    const { identity, model, workspace, admission } = admitted;
    const scope = { principal: identity.principal, workspace };
    const asked = { scope, previousResponseId: body.previous_response_id, conversationId };
    const continuation = await continuationOf(options, request, asked, input);
    const { conversation, hints, continueQueryId, prompt } = continuation;
    // A forced function is answered as its call: the output is one function_call item, whose result continues this thread.
    const call = structured?.kind === "function" ? { call: { name: structured.name ?? "" } } : {};
    const echoed = { conversation, ...(body.background ? { background: true } : {}), ...call };
    const meta = { ...metaOf(id, body, seconds(), continuation.previousResponseId, citations), ...echoed };
    const handles = meta.call ? [`call:${itemIdOf(meta, "call")}`] : [];
    const createFields = body.query;
    const plan = { prompt, mode: model.mode, choices: 1, continueQueryId, createFields, from: CREATE_FIELDS, structured };
    const spanStart = { operation: "chat", model: body.model, stream: body.stream === true } as const;
    const promptIndex = input.messages.findLastIndex((message) => message.role === "user");
    await runner.run({ response, identity, workspace, meter: admission.meter, input: plan, spanStart, markers }, ([queryId = ""]) => {
      const turn: Turn = { id, ...scope, queryId, meta, input: continuation.items, conversation };
      const { delivery, encoder } = deliveryOf(body, meta, { mode: model.mode, prompt, turn }, admission);
      const remember = async (sent: ChoiceSent[]) => {
        const remembered = options.threads.remember(scope, hints, { promptIndex, answer: sent[0]?.content ?? "", queryId, handles });
        await Promise.all([remembered, stored.storeTurn(turn, encoder)]);
      };
      return { delivery, respondedAs: id, remember };
    });
  }

  /** How the request's citations are written (docs/citations.md#the-responses-api): the format asked for, and the links of its workspace. */
  function citationsOf(request: IncomingMessage, workspace: string): CitationFormat {
    const format = responseAnnotationFormat(request, config.answers.responsesAnnotations);
    const documentPage = options.documentPage?.() ?? null;
    return { format, links: { template: config.answers.sourceUrlTemplate ?? null, documentPage, workspace } };
  }

  /**
   * What the request asks in structure (docs/structured-answers.md), its schema checked (a 400)
   * once admitted, so that the limits count a request whose schema is refused, and before anything
   * is asked; what stays unanswerable refused (or, with `LENIENT_PARAMETERS=on`, ignored). In the background too: the runner judges it there as anywhere (a replica taking it
   * over refuses it, `responsesResumption`).
   */
  function structuredOf(body: ResponseRequest, response: ServerResponse) {
    const structured = readResponseStructured(body);
    refuseUnsupported(unansweredResponseParameters(body), response, options.parameters);
    return structured;
  }

  /** Answered by the adapter (docs/chat-ui-tasks.md), and not stored: no query a later response could continue. */
  async function answerTask(
    response: ServerResponse,
    valid: ValidAnswerRequest<ResponseRequest>,
    task: ChatUiTask,
    id: string,
    input: ReadInput,
    citations: CitationFormat,
  ): Promise<void> {
    await admitValidRequest(response, valid, options, { task });
    const text = localReply(task, asksResponseJson(valid.body));
    const prompt = input.messages.at(-1)?.text ?? "";
    const meta = { ...metaOf(id, valid.body, seconds(), null, citations), store: false };
    const delivery: Delivery<unknown> = valid.body.stream
      ? sse(new ResponseStreamEncoder(meta, seconds, options.documentLinks), sweep)
      : json(new ResponseBodyEncoder(meta, seconds, options.documentLinks));
    await runner.answerLocally(response, { prompt, text, choices: 1, id: options.ids.local() }, delivery);
  }

  /** The delivery of a response: one body, a stream, or a background answer (its stream into an event log); and its encoder, for the stored turn. */
  function deliveryOf(
    body: ResponseRequest,
    meta: ResponseMeta,
    resume: BackgroundResume,
    admission: Admitted,
  ): { delivery: Delivery<unknown>; encoder: FinishedAnswer } {
    if (!body.stream && !body.background) {
      const encoder = new ResponseBodyEncoder(meta, seconds, options.documentLinks);
      return { delivery: json(encoder), encoder };
    }
    const encoder = new ResponseStreamEncoder(meta, seconds, options.documentLinks);
    if (!body.background) return { delivery: sse(encoder, sweep), encoder };
    const { turn } = resume;
    const record = { id: turn.id, principal: turn.principal, workspace: turn.workspace, queryId: turn.queryId, resume };
    const follow = body.stream ? sweep : undefined;
    return { delivery: background(encoder, { responses: options.background, record, admission, follow }), encoder };
  }

  return [
    { method: "POST", path: "/v1/responses", handler: { fast: answerHandler(create, options) }, operation: createResponseOperation },
    // Before the stored responses: `/v1/responses/compact` is not a response id.
    ...compactAndCountRoutes(options),
    ...storedResponseRoutes(options),
  ];
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
