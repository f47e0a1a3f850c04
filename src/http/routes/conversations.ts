import { randomBytes } from "node:crypto";
import type { Request, RequestHandler } from "express";
import type { Logger } from "pino";
import type { z } from "zod";
import type { Authenticator, Identity } from "../../auth/authenticate.js";
import type { Config } from "../../config/config.js";
import type { ConversationItem, ConversationItemsStore, ConversationRecord } from "../../continuity/conversation-items.js";
import { conversationCreateSchema, conversationItemsSchema, conversationUpdateSchema } from "../../dialects/responses/conversation-request.js";
import { storedItem } from "../../dialects/responses/read-input.js";
import { CONVERSATION_ID, type InputItem } from "../../dialects/responses/response-request.js";
import { ContinuationUnavailableError, NotFoundError, RequestValidationError } from "../../errors/adapter-error.js";
import type { Clock } from "../../util/clock.js";
import { inspectJson } from "../inspect-json.js";
import { pageOf, readListQuery } from "../list-query.js";
import { errorResponse, workspaceHeader } from "../openapi.js";
import { readJsonBody } from "../request-body.js";
import { resolveWorkspace } from "../resolve-workspace.js";
import type { Route } from "../route-table.js";
import { toValidationIssues } from "../validation-issues.js";

/** What the Conversations API needs. */
export interface ConversationsRouteOptions {
  config: Pick<Config, "bodyLimitBytes" | "maxJsonDepth" | "defaultWorkspace" | "conversationTtlSeconds">;
  authenticate: Authenticator;
  conversationItems: ConversationItemsStore;
  clock: Clock;
  logger: Logger;
  newQueryId: () => string;
  /** Told when a request was refused because the store could not answer (metrics). */
  onStoreRefused?: (() => void) | undefined;
}

/** A new random id with OpenAI's prefix (`conv_`, `msg_`): nothing in it names the workspace or the key. */
export const newOpenAIId = (prefix: string) => `${prefix}_${randomBytes(24).toString("hex")}`;

/** The Conversations API's conversation object. */
export function conversationObject(record: ConversationRecord) {
  return { id: record.id, object: "conversation" as const, created_at: record.createdAt, metadata: record.metadata };
}

/** Items as the API lists them: each with an id (`msg_…` when it came without one). */
export function itemsOf(items: readonly InputItem[]): ConversationItem[] {
  return items.map((item) => storedItem(item, item.id ?? newOpenAIId("msg")));
}

/**
 * A conversation the caller may see: made with the same credential, in the workspace the request
 * names (if it names one); a 404 otherwise, as for stored responses. The store failing is a 503:
 * "unknown" is never "not found".
 */
export async function visibleConversation(
  store: ConversationItemsStore,
  id: string,
  identity: Identity,
  workspace: string | undefined,
  param: string,
  onStoreRefused?: () => void,
): Promise<ConversationRecord> {
  let record: ConversationRecord | null = null;
  if (CONVERSATION_ID.test(id)) {
    try {
      record = await store.get(id);
    } catch (error) {
      onStoreRefused?.();
      throw new ContinuationUnavailableError(`The conversation '${id}'`, "conversation_store_unavailable", error);
    }
  }
  if (!record || record.principal !== identity.principal || (workspace !== undefined && record.workspace !== workspace)) {
    throw new NotFoundError(`No conversation with id '${id}' was found`, { param, code: "conversation_not_found" });
  }
  return record;
}

/**
 * The Conversations API (docs/responses-api.md#conversations): conversations with metadata and
 * items, each mapped onto one workspace query thread that `responses.create({conversation})`
 * continues (adding its input and output as items). Readable from any replica when the store is Redis.
 */
export function conversationsRoutes(options: ConversationsRouteOptions): Route[] {
  const { config, conversationItems: store } = options;
  const ttl = config.conversationTtlSeconds;

  const requestWorkspace = (request: Request): string | undefined => {
    const header = request.headers["service-workspace"];
    return typeof header === "string" && header !== "" ? header : undefined;
  };
  const conversationOf = (request: Request) =>
    visibleConversation(store, (request.params as { id: string }).id, options.authenticate(request), requestWorkspace(request), "conversation_id", options.onStoreRefused);

  async function bodyOf<Schema extends z.ZodType>(request: Request, schema: Schema): Promise<z.output<Schema>> {
    const raw = await readJsonBody(request, config.bodyLimitBytes);
    const hazards = inspectJson(raw, config.maxJsonDepth);
    if (hazards.length > 0) throw new RequestValidationError(hazards);
    const parsed = schema.safeParse(raw, { reportInput: true });
    if (!parsed.success) throw new RequestValidationError(toValidationIssues(parsed.error.issues, "body"));
    return parsed.data;
  }

  const create: RequestHandler = async (request, response) => {
    const identity = options.authenticate(request);
    const workspace = resolveWorkspace(request, undefined, config.defaultWorkspace);
    if ("issue" in workspace) throw new RequestValidationError([workspace.issue]);
    const body = await bodyOf(request, conversationCreateSchema);
    const record: ConversationRecord = {
      id: newOpenAIId("conv"),
      principal: identity.principal,
      workspace: workspace.workspace,
      createdAt: Math.floor(options.clock.now() / 1000),
      metadata: body.metadata ?? {},
      queryId: options.newQueryId(),
    };
    await store.create(record, itemsOf(body.items ?? []), ttl);
    response.json(conversationObject(record));
  };

  const retrieve: RequestHandler = async (request, response) => {
    response.json(conversationObject(await conversationOf(request)));
  };

  const update: RequestHandler = async (request, response) => {
    const record = await conversationOf(request);
    const body = await bodyOf(request, conversationUpdateSchema);
    const updated = { ...record, metadata: body.metadata };
    if (!(await store.update(updated, ttl))) throw new NotFoundError(`No conversation with id '${record.id}' was found`, { param: "conversation_id" });
    response.json(conversationObject(updated));
  };

  const remove: RequestHandler = async (request, response) => {
    const record = await conversationOf(request);
    await store.delete(record.id);
    response.json({ id: record.id, object: "conversation.deleted", deleted: true });
  };

  const listItems: RequestHandler = async (request, response) => {
    const record = await conversationOf(request);
    response.json(pageOf(await store.items(record.id), readListQuery(request), "item"));
  };

  const addItems: RequestHandler = async (request, response) => {
    const record = await conversationOf(request);
    const body = await bodyOf(request, conversationItemsSchema);
    const items = itemsOf(body.items);
    if (!(await store.append(record.id, items, ttl))) throw new NotFoundError(`No conversation with id '${record.id}' was found`, { param: "conversation_id" });
    response.json({ object: "list", data: items, first_id: items[0]?.id ?? "", last_id: items.at(-1)?.id ?? "", has_more: false });
  };

  const itemOf = async (request: Request) => {
    const record = await conversationOf(request);
    const itemId = (request.params as { item_id: string }).item_id;
    const item = (await store.items(record.id)).find((entry) => entry.id === itemId);
    if (!item) throw new NotFoundError(`No item with id '${itemId}' in conversation '${record.id}'`, { param: "item_id", code: "item_not_found" });
    return { record, item };
  };

  const retrieveItem: RequestHandler = async (request, response) => {
    response.json((await itemOf(request)).item);
  };

  const removeItem: RequestHandler = async (request, response) => {
    const { record, item } = await itemOf(request);
    await store.deleteItem(record.id, item.id);
    response.json(conversationObject(record));
  };

  const bearer = [{ bearer: [] }];
  const id = { name: "id", in: "path", required: true, schema: { type: "string" } };
  const itemId = { name: "item_id", in: "path", required: true, schema: { type: "string" } };
  const notFound = errorResponse("No such conversation (or item) for this credential and workspace");
  const conversation = { description: "The conversation `{id, object: \"conversation\", created_at, metadata}`" };
  const list = [
    { name: "order", in: "query", schema: { type: "string", enum: ["asc", "desc"] } },
    { name: "after", in: "query", schema: { type: "string" } },
    { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 100 } },
  ];
  const invalid = errorResponse("Invalid request (FastAPI-style `detail` list)");
  return [
    {
      method: "POST",
      path: "/v1/conversations",
      handler: { express: create },
      operation: {
        summary: "Creates a conversation (items, metadata): one workspace query thread its responses continue",
        security: bearer,
        parameters: [workspaceHeader],
        responses: { "200": conversation, "422": invalid },
      },
    },
    {
      method: "GET",
      path: "/v1/conversations/{id}",
      handler: { express: retrieve },
      operation: { summary: "A conversation", security: bearer, parameters: [id], responses: { "200": conversation, "404": notFound } },
    },
    {
      method: "POST",
      path: "/v1/conversations/{id}",
      handler: { express: update },
      operation: { summary: "Replaces a conversation's metadata", security: bearer, parameters: [id], responses: { "200": conversation, "404": notFound, "422": invalid } },
    },
    {
      method: "DELETE",
      path: "/v1/conversations/{id}",
      handler: { express: remove },
      operation: {
        summary: "Deletes a conversation and its items (the workspace query stays upstream)",
        security: bearer,
        parameters: [id],
        responses: { "200": { description: "`{id, object: \"conversation.deleted\", deleted: true}`" }, "404": notFound },
      },
    },
    {
      method: "GET",
      path: "/v1/conversations/{id}/items",
      handler: { express: listItems },
      operation: {
        summary: "A conversation's items as OpenAI's list (`order`, default desc; `after`; `limit`)",
        security: bearer,
        parameters: [id, ...list],
        responses: { "200": { description: "A list of items" }, "404": notFound, "422": invalid },
      },
    },
    {
      method: "POST",
      path: "/v1/conversations/{id}/items",
      handler: { express: addItems },
      operation: {
        summary: "Adds items at the end of a conversation (at most 20)",
        security: bearer,
        parameters: [id],
        responses: { "200": { description: "The items added, as a list" }, "404": notFound, "422": invalid },
      },
    },
    {
      method: "GET",
      path: "/v1/conversations/{id}/items/{item_id}",
      handler: { express: retrieveItem },
      operation: { summary: "One item of a conversation", security: bearer, parameters: [id, itemId], responses: { "200": { description: "The item" }, "404": notFound } },
    },
    {
      method: "DELETE",
      path: "/v1/conversations/{id}/items/{item_id}",
      handler: { express: removeItem },
      operation: {
        summary: "Deletes one item of a conversation",
        security: bearer,
        parameters: [id, itemId],
        responses: { "200": conversation, "404": notFound },
      },
    },
  ];
}
