import type { IncomingMessage } from "node:http";
import type { z } from "zod";
import type { Authenticator } from "../../auth/authenticate.js";
import type { Config } from "../../config/config.js";
import type { ConversationItem, ConversationRecord } from "../../continuity/conversations-api/conversations-api-store.js";
import type { ConversationsApi } from "../../continuity/conversations-api/conversations-api.js";
import { conversationCreateSchema, conversationItemsSchema, conversationUpdateSchema } from "../../dialects/responses/conversation-request.js";
import { storedItem } from "../../dialects/responses/read-input.js";
import type { InputItem } from "../../dialects/responses/response-request.js";
import { NotFoundError, RequestValidationError } from "../../errors/adapter-error.js";
import type { Ids } from "../../util/ids.js";
import { sendJson } from "../error-response.js";
import { inspectJson } from "../inspect-json.js";
import { pageOf, readListQuery } from "../list-query.js";
import { errorResponse, workspaceHeader } from "../openapi.js";
import { readJsonBody } from "../request-body.js";
import { namedWorkspace, resolveWorkspace } from "../resolve-workspace.js";
import { visibleConversation } from "../responses/response-lookups.js";
import { type Route, type RouteCall, route } from "../route-table.js";
import { toValidationIssues } from "../validation-issues.js";

/** What the Conversations API's routes need. */
export interface ConversationsRouteOptions {
  config: Pick<Config, "limits" | "upstream">;
  authenticate: Authenticator;
  conversations: ConversationsApi;
  /** Ids of the items that come without one (`msg_…`). */
  ids: Ids;
}

/** The Conversations API's conversation object. */
function conversationObject(record: ConversationRecord) {
  return { id: record.id, object: "conversation" as const, created_at: record.createdAt, metadata: record.metadata };
}

/** A conversation that went between its lookup and a change (deleted, expired). */
function gone(id: string): NotFoundError {
  return new NotFoundError(`No conversation with id '${id}' was found`, { param: "conversation_id" });
}

/**
 * The Conversations API (docs/responses-api.md#conversations): conversations with metadata and
 * items, each mapped onto one workspace query thread that `responses.create({conversation})`
 * continues (adding its input and output as items). Readable from any replica when the store is
 * Redis. The records are `ConversationsApi`'s; these routes read requests, give items their ids
 * (`msg_…` for one that came without), and write the API's objects.
 */
export function conversationsRoutes(options: ConversationsRouteOptions): Route[] {
  const { config, conversations } = options;

  const conversationOf = ({ request, params }: RouteCall<{ readonly id: string }>) =>
    visibleConversation(conversations, params.id, { principal: options.authenticate(request).principal, workspace: namedWorkspace(request) }, "conversation_id");

  async function bodyOf<Schema extends z.ZodType>(request: IncomingMessage, schema: Schema): Promise<z.output<Schema>> {
    const raw = await readJsonBody(request, config.limits.bodyLimitBytes);
    const hazards = inspectJson(raw, config.limits.maxJsonDepth);
    if (hazards.length > 0) throw new RequestValidationError(hazards);
    const parsed = schema.safeParse(raw, { reportInput: true });
    if (!parsed.success) throw new RequestValidationError(toValidationIssues(parsed.error.issues, "body"));
    return parsed.data;
  }

  /** Items as the API lists them: each with an id (`msg_…` when it came without one). */
  const itemsOf = (items: readonly InputItem[]): ConversationItem[] => items.map((item) => storedItem(item, item.id ?? options.ids.object("msg")));

  async function create({ request, response }: RouteCall): Promise<void> {
    const identity = options.authenticate(request);
    const workspace = resolveWorkspace(request, undefined, config.upstream.defaultWorkspace);
    if ("issue" in workspace) throw new RequestValidationError([workspace.issue]);
    const body = await bodyOf(request, conversationCreateSchema);
    const owner = { principal: identity.principal, workspace: workspace.workspace };
    const record = await conversations.create(owner, { items: itemsOf(body.items ?? []), metadata: body.metadata ?? {} });
    sendJson(response, conversationObject(record));
  }

  async function retrieve(call: RouteCall<{ readonly id: string }>): Promise<void> {
    sendJson(call.response, conversationObject(await conversationOf(call)));
  }

  async function update(call: RouteCall<{ readonly id: string }>): Promise<void> {
    const record = await conversationOf(call);
    const body = await bodyOf(call.request, conversationUpdateSchema);
    const updated = await conversations.update(record, body.metadata);
    if (!updated) throw gone(record.id);
    sendJson(call.response, conversationObject(updated));
  }

  async function remove(call: RouteCall<{ readonly id: string }>): Promise<void> {
    const record = await conversationOf(call);
    await conversations.delete(record.id);
    sendJson(call.response, { id: record.id, object: "conversation.deleted", deleted: true });
  }

  async function listItems(call: RouteCall<{ readonly id: string }>): Promise<void> {
    const record = await conversationOf(call);
    sendJson(call.response, pageOf(await conversations.items(record.id), readListQuery(call.query), "item"));
  }

  async function addItems(call: RouteCall<{ readonly id: string }>): Promise<void> {
    const record = await conversationOf(call);
    const body = await bodyOf(call.request, conversationItemsSchema);
    const items = itemsOf(body.items);
    if (!(await conversations.append(record.id, items))) throw gone(record.id);
    sendJson(call.response, { object: "list", data: items, first_id: items[0]?.id ?? "", last_id: items.at(-1)?.id ?? "", has_more: false });
  }

  /** A conversation's item (the conversation first: an unknown one is its own 404). */
  async function itemOf(call: RouteCall<{ readonly id: string; readonly item_id: string }>) {
    const record = await conversationOf(call);
    const { item_id: itemId } = call.params;
    const item = await conversations.item(record.id, itemId);
    if (!item) throw new NotFoundError(`No item with id '${itemId}' in conversation '${record.id}'`, { param: "item_id", code: "item_not_found" });
    return { record, item };
  }

  async function retrieveItem(call: RouteCall<{ readonly id: string; readonly item_id: string }>): Promise<void> {
    sendJson(call.response, (await itemOf(call)).item);
  }

  async function removeItem(call: RouteCall<{ readonly id: string; readonly item_id: string }>): Promise<void> {
    const { record, item } = await itemOf(call);
    await conversations.deleteItem(record.id, item.id);
    sendJson(call.response, conversationObject(record));
  }

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
    route("POST", "/v1/conversations", create, {
      summary: "Creates a conversation (items, metadata): one workspace query thread its responses continue",
      security: bearer,
      parameters: [workspaceHeader],
      responses: { "200": conversation, "422": invalid },
    }),
    route("GET", "/v1/conversations/{id}", retrieve, { summary: "A conversation", security: bearer, parameters: [id], responses: { "200": conversation, "404": notFound } }),
    route("POST", "/v1/conversations/{id}", update, { summary: "Replaces a conversation's metadata", security: bearer, parameters: [id], responses: { "200": conversation, "404": notFound, "422": invalid } }),
    route("DELETE", "/v1/conversations/{id}", remove, {
      summary: "Deletes a conversation and its items (the workspace query stays upstream)",
      security: bearer,
      parameters: [id],
      responses: { "200": { description: "`{id, object: \"conversation.deleted\", deleted: true}`" }, "404": notFound },
    }),
    route("GET", "/v1/conversations/{id}/items", listItems, {
      summary: "A conversation's items as OpenAI's list (`order`, default desc; `after`; `limit`)",
      security: bearer,
      parameters: [id, ...list],
      responses: { "200": { description: "A list of items" }, "404": notFound, "422": invalid },
    }),
    route("POST", "/v1/conversations/{id}/items", addItems, {
      summary: "Adds items at the end of a conversation (at most 20)",
      security: bearer,
      parameters: [id],
      responses: { "200": { description: "The items added, as a list" }, "404": notFound, "422": invalid },
    }),
    route("GET", "/v1/conversations/{id}/items/{item_id}", retrieveItem, { summary: "One item of a conversation", security: bearer, parameters: [id, itemId], responses: { "200": { description: "The item" }, "404": notFound } }),
    route("DELETE", "/v1/conversations/{id}/items/{item_id}", removeItem, {
      summary: "Deletes one item of a conversation",
      security: bearer,
      parameters: [id, itemId],
      responses: { "200": conversation, "404": notFound },
    }),
  ];
}
