import type { Request, RequestHandler } from "express";
import type { z } from "zod";
import type { Authenticator } from "../../auth/authenticate.js";
import type { Config } from "../../config/config.js";
import { conversationObject, type ConversationsApi } from "../../continuity/conversations-api/conversations-api.js";
import { conversationCreateSchema, conversationItemsSchema, conversationUpdateSchema } from "../../dialects/responses/conversation-request.js";
import { RequestValidationError } from "../../errors/adapter-error.js";
import { inspectJson } from "../inspect-json.js";
import { pageOf, readListQuery } from "../list-query.js";
import { errorResponse, workspaceHeader } from "../openapi.js";
import { readJsonBody } from "../request-body.js";
import { namedWorkspace, resolveWorkspace } from "../resolve-workspace.js";
import type { Route } from "../route-table.js";
import { toValidationIssues } from "../validation-issues.js";

/** What the Conversations API's routes need. */
export interface ConversationsRouteOptions {
  config: Pick<Config, "limits" | "upstream">;
  authenticate: Authenticator;
  conversations: ConversationsApi;
}

/**
 * The Conversations API (docs/responses-api.md#conversations): conversations with metadata and
 * items, each mapped onto one workspace query thread that `responses.create({conversation})`
 * continues (adding its input and output as items). Readable from any replica when the store is
 * Redis. The rules are `ConversationsApi`'s; these routes read requests and write its objects.
 */
export function conversationsRoutes(options: ConversationsRouteOptions): Route[] {
  const { config, conversations } = options;

  const conversationOf = (request: Request) =>
    conversations.visible((request.params as { id: string }).id, options.authenticate(request).principal, namedWorkspace(request), "conversation_id");

  async function bodyOf<Schema extends z.ZodType>(request: Request, schema: Schema): Promise<z.output<Schema>> {
    const raw = await readJsonBody(request, config.limits.bodyLimitBytes);
    const hazards = inspectJson(raw, config.limits.maxJsonDepth);
    if (hazards.length > 0) throw new RequestValidationError(hazards);
    const parsed = schema.safeParse(raw, { reportInput: true });
    if (!parsed.success) throw new RequestValidationError(toValidationIssues(parsed.error.issues, "body"));
    return parsed.data;
  }

  const create: RequestHandler = async (request, response) => {
    const identity = options.authenticate(request);
    const workspace = resolveWorkspace(request, undefined, config.upstream.defaultWorkspace);
    if ("issue" in workspace) throw new RequestValidationError([workspace.issue]);
    const body = await bodyOf(request, conversationCreateSchema);
    const owner = { principal: identity.principal, workspace: workspace.workspace };
    const record = await conversations.create(owner, { items: body.items ?? [], metadata: body.metadata ?? {} });
    response.json(conversationObject(record));
  };

  const retrieve: RequestHandler = async (request, response) => {
    response.json(conversationObject(await conversationOf(request)));
  };

  const update: RequestHandler = async (request, response) => {
    const record = await conversationOf(request);
    const body = await bodyOf(request, conversationUpdateSchema);
    response.json(conversationObject(await conversations.update(record, body.metadata)));
  };

  const remove: RequestHandler = async (request, response) => {
    const record = await conversationOf(request);
    await conversations.delete(record.id);
    response.json({ id: record.id, object: "conversation.deleted", deleted: true });
  };

  const listItems: RequestHandler = async (request, response) => {
    const record = await conversationOf(request);
    response.json(pageOf(await conversations.items(record.id), readListQuery(request), "item"));
  };

  const addItems: RequestHandler = async (request, response) => {
    const record = await conversationOf(request);
    const body = await bodyOf(request, conversationItemsSchema);
    const items = await conversations.append(record, body.items);
    response.json({ object: "list", data: items, first_id: items[0]?.id ?? "", last_id: items.at(-1)?.id ?? "", has_more: false });
  };

  const itemOf = async (request: Request) => {
    const record = await conversationOf(request);
    return { record, item: await conversations.item(record, (request.params as { item_id: string }).item_id) };
  };

  const retrieveItem: RequestHandler = async (request, response) => {
    response.json((await itemOf(request)).item);
  };

  const removeItem: RequestHandler = async (request, response) => {
    const { record, item } = await itemOf(request);
    await conversations.deleteItem(record.id, item.id);
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
