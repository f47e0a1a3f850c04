import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Request, RequestHandler } from "express";
import type { TokenUsage } from "../../answer/answer-events.js";
import type { Identity } from "../../auth/authenticate.js";
import type { Config } from "../../config/config.js";
import { type ConversationHints, conversationIdFrom } from "../../continuity/conversations.js";
import { ResponseBodyEncoder, type ResponseMeta, ResponseStreamEncoder } from "../../dialects/responses/encode-response.js";
import { type ReadInput, readInput, type StoredInputItem } from "../../dialects/responses/read-input.js";
import type { ResponseObject } from "../../dialects/responses/response-object.js";
import { RESPONSE_ID, type ResponseRequest, responseRequestSchema } from "../../dialects/responses/response-request.js";
import { ContinuationUnavailableError, NotFoundError, RequestValidationError } from "../../errors/adapter-error.js";
import type { ChatUiTask } from "../../chat-ui-tasks/chat-ui-task.js";
import { localReply } from "../../chat-ui-tasks/local-reply.js";
import { asksResponseJson, forcesResponseToolCall, unsupportedResponseParameters } from "../../dialects/responses/unsupported-parameters.js";
import type { ResponseStore, StoredEntry } from "../../stores/response-store.js";
import { admitLocalTask, admitValidRequest, type AnswerRouteOptions, answerHandler, readAnswerRequest, type ValidAnswerRequest } from "../answer-request.js";
import { AnswerRunner, json, sse } from "../answer-runner.js";
import type { ChatUiHousekeeping } from "../chat-ui-housekeeping.js";
import { type ParameterPolicy, refuseUnsupported } from "../unsupported-parameters.js";
import { errorResponse, workspaceHeader } from "../openapi.js";
import type { Route } from "../route-table.js";
import { formatFrame } from "../sse-writer.js";
import { type RetryOutcome, writeBriefly } from "../../util/retry-briefly.js";

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
}

/** What a stored response keeps beside its object: its input, and the answer to replay its events from. */
interface StoredValue {
  response: ResponseObject;
  input: StoredInputItem[];
  meta: ResponseMeta;
  answer: ResponseBodyEncoder["answer"];
  usage: TokenUsage;
}

/**
 * The Responses API (docs/architecture.md#data-flow-of-one-request): `POST /v1/responses` on the
 * fast path, and the stored responses — retrieve (with `stream=true` replaying the events), delete,
 * list input items. `previous_response_id` (or an `item_reference` to a stored output item)
 * continues the upstream query of that response's chain.
 */
export function responsesRoutes(options: ResponsesRouteOptions): Route[] {
  const { config, responses } = options;
  const schema = responseRequestSchema(config);
  const runner = new AnswerRunner({ ...options, modeField: config.modeField, newQueryId: options.newQueryId ?? randomUUID });
  const newResponseId = options.newResponseId ?? (() => `resp_${randomUUID().replaceAll("-", "")}`);
  const sweep = options.sweeps.of(config.sseKeepAliveMs);
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
  async function lookup(find: () => Promise<StoredEntry | null>, what: string): Promise<StoredEntry | null> {
    try {
      return await find();
    } catch (error) {
      options.logger.warn({ err: { message: (error as Error).message } }, "response store lookup failed: the request is refused");
      options.onStoreRefused?.();
      throw new ContinuationUnavailableError(`The stored response ${what}`, "response_store_unavailable", error);
    }
  }

  async function create(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const valid = await readAnswerRequest(request, schema, options);
    const id = newResponseId();
    const input = readInput(valid.body.input, id);
    // `instructions` is where a UI's system prompt travels on this API: part of the frame.
    const framed = valid.body.instructions ? [{ role: "system", text: valid.body.instructions }, ...input.messages] : input.messages;
    const task = options.housekeeping.localTask(framed, forcesResponseToolCall(valid.body));
    if (task) return answerChatUiTask(response, valid, task, id, input);
    refuseUnsupported(unsupportedResponseParameters(valid.body), response, options.parameters);
    const { identity, body, model, workspace, admission } = await admitValidRequest(response, valid, options);
    const scope = { principal: identity.principal, workspace };
    const conversationId = conversationIdFrom(request.headers, config.conversationIdHeaders);
    const hints: ConversationHints = { conversationId, messages: input.messages };
    const items = await resolveReferences(input.items, identity, workspace);
    const previous = body.previous_response_id ? await visible(body.previous_response_id, identity, workspace, "previous_response_id") : null;
    const referenced = previous ? null : items.lastReferenced;
    const continueQueryId = previous?.queryId ?? referenced?.queryId ?? (await options.conversations.find(scope, hints));
    const from = { choices: ["body"], createFields: ["body", "query"] };
    const plan = { prompt: input.prompt, mode: model.mode, choices: 1, continueQueryId, createFields: body.query, from };
    const trace = { operation: "chat", model: body.model, stream: body.stream === true } as const;
    const meta = metaOf(id, body, seconds(), previous?.id ?? null);
    const encoder = body.stream ? new ResponseStreamEncoder(meta, seconds) : new ResponseBodyEncoder(meta, seconds);
    const promptIndex = input.messages.findLastIndex((message) => message.role === "user");
    await runner.run<unknown>({ response, identity, workspace, meter: admission, input: plan, trace }, ([queryId = ""]) => ({
      delivery: encoder instanceof ResponseStreamEncoder ? sse(encoder, sweep) : json(encoder),
      respondedAs: id,
      remember: async (sent) => {
        const turn = options.conversations.remember(scope, hints, { promptIndex, answer: sent[0]?.content ?? "", queryId });
        const finished = encoder.finished;
        if (!meta.store || !finished || !encoder.usage) return turn;
        const { answer: sentAnswer, usage } = encoder;
        const value: StoredValue = { response: finished, input: items.resolved, meta, answer: sentAnswer, usage };
        const itemIds = finished.output.map((item) => item.id);
        const entry = { id, principal: identity.principal, workspace, queryId, itemIds, value };
        const stored = writeBriefly(() => responses.put(entry, config.responsesTtlSeconds), {
          clock: options.clock,
          wake: options.storeAnswersAgain,
          waitMs: config.storeWriteWaitMs,
          onOutcome: options.onStored,
          onLost: (error) =>
            options.logger.warn({ responseId: id, queryId, err: { message: (error as Error).message } }, "response could not be stored"),
        });
        await Promise.all([turn, stored]);
      },
    }));
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
    const { body } = valid;
    admitLocalTask(response, valid, task, options);
    const prompt = input.messages.at(-1)?.text ?? "";
    const answer = options.answers.answerLocally({ prompt, text: localReply(task, asksResponseJson(body)), choices: 1, id: `local-${randomUUID()}` });
    const meta = { ...metaOf(id, body, seconds(), null), store: false };
    if (body.stream) await runner.deliverLocal(response, answer, sse(new ResponseStreamEncoder(meta, seconds), sweep));
    else await runner.deliverLocal(response, answer, json(new ResponseBodyEncoder(meta, seconds)));
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

  const retrieve: RequestHandler = async (request, response) => {
    const entry = await entryOf(request);
    const value = entry.value as StoredValue;
    if (request.query.stream !== "true") {
      response.json(value.response);
      return;
    }
    const after = request.query.starting_after === undefined ? -1 : Number(request.query.starting_after);
    if (!Number.isInteger(after) || after < -1) {
      throw new RequestValidationError([{ loc: ["query", "starting_after"], msg: "Input should be a valid integer", type: "int_parsing", input: request.query.starting_after }]);
    }
    response.status(200).setHeader("content-type", "text/event-stream; charset=utf-8");
    response.setHeader("cache-control", "no-cache, no-store");
    for (const frame of replay(value)) {
      if ((frame.data as { sequence_number: number }).sequence_number > after) response.write(formatFrame(frame));
    }
    response.end();
  };

  const remove: RequestHandler = async (request, response) => {
    const entry = await entryOf(request);
    await responses.delete(entry.id);
    response.json({ id: entry.id, object: "response", deleted: true });
  };

  const inputItems: RequestHandler = async (request, response) => {
    const entry = await entryOf(request);
    const page = readListQuery(request);
    const items = [...(entry.value as StoredValue).input];
    if (page.order === "desc") items.reverse();
    const start = page.after === undefined ? 0 : items.findIndex((item) => item.id === page.after) + 1;
    if (page.after !== undefined && start === 0) {
      throw new RequestValidationError([{ loc: ["query", "after"], msg: "No input item with this id", type: "value_error", input: page.after }]);
    }
    const data = items.slice(start, start + page.limit);
    response.json({ object: "list", data, first_id: data[0]?.id ?? "", last_id: data.at(-1)?.id ?? "", has_more: start + page.limit < items.length });
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

/** `order` (default desc), `after` and `limit` (1 to 100, default 20) of an input-items list; a 422 otherwise. */
function readListQuery(request: Request): { order: "asc" | "desc"; after: string | undefined; limit: number } {
  const { order = "desc", after, limit = "20" } = request.query as Record<string, string | undefined>;
  const issues = [];
  if (order !== "asc" && order !== "desc") issues.push({ loc: ["query", "order"], msg: "Input should be 'asc' or 'desc'", type: "enum", input: order });
  const size = Number(limit);
  if (!Number.isInteger(size) || size < 1 || size > 100) {
    issues.push({ loc: ["query", "limit"], msg: "Input should be an integer from 1 to 100", type: "int_range", input: limit });
  }
  if (issues.length > 0) throw new RequestValidationError(issues);
  return { order: order as "asc" | "desc", after, limit: size };
}
