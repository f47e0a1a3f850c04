import type { ServerResponse } from "node:http";
import type { Request, RequestHandler } from "express";
import type { Identity } from "../../auth/authenticate.js";
import type { Config } from "../../config/config.js";
import { type BackgroundResponses, hasEnded } from "../../continuity/background/background-responses.js";
import type { BackgroundRecord } from "../../continuity/background/background-store.js";
import { responseInProgress, responsesResumption } from "../../continuity/background/responses-resumption.js";
import type { StoredResponses } from "../../continuity/responses/stored-responses.js";
import { replay } from "../../dialects/responses/stored-value.js";
import { InvalidRequestError } from "../../errors/adapter-error.js";
import { type Admitted, admit } from "../admission.js";
import type { AnswerRouteOptions } from "../answer-request.js";
import { readStartingAfter, streamBackground } from "../delivery/background-delivery.js";
import { pageOf, readListQuery } from "../list-query.js";
import { sendUncached } from "../error-response.js";
import { errorResponse } from "../openapi.js";
import { namedWorkspace } from "../resolve-workspace.js";
import type { Route } from "../route-table.js";
import { SseWriter } from "../sse-writer.js";
import { errorMessage } from "../../util/error-message.js";
import type { DocumentLinkSigning } from "../../answer/source-links.js";

/** What the stored-response routes need: the runner (a takeover), the edge, and the stores of responses. */
export interface StoredResponseRouteOptions extends AnswerRouteOptions {
  config: Pick<Config, "answers">;
  stored: StoredResponses;
  /** Background responses: their records and event logs, in process or shared (docs/responses-api.md#background-mode). */
  background: BackgroundResponses;
  /** Signs the links of replayed `url_citation`s to the adapter's document page where it asks for a key (listed keys). */
  documentLinks?: DocumentLinkSigning | undefined;
}

/**
 * The stored responses of the Responses API (docs/responses-api.md): retrieve (with `stream=true`
 * its events replayed through the same SSE writer as a live answer, after `starting_after`),
 * delete, cancel a background one, and list the input items. Only the credential that created one
 * sees it, and only in the workspace the request names (if it names one): `owned`.
 */
export function storedResponseRoutes(options: StoredResponseRouteOptions): Route[] {
  const { stored, background } = options;
  const sweep = options.sweeps.of(options.config.answers.sseKeepAliveMs);
  const seconds = () => Math.floor(options.clock.now() / 1000);
  const resumption = responsesResumption(stored, seconds);
  const idOf = (request: Request) => (request.params as { id: string }).id;
  const storedOf = (request: Request) => stored.visible(idOf(request), options.authenticate(request).principal, namedWorkspace(request), "response_id");
  /** The background response of that id this caller may see (the same rule as stored responses'), or null when there is none. */
  const backgroundOf = (request: Request) =>
    background.visible(idOf(request), options.authenticate(request).principal, namedWorkspace(request));
  const streamContext = { ...options.runner.context, sweep };

  const retrieve: RequestHandler = async (request, response) => {
    const record = await backgroundOf(request);
    if (record) {
      const orphan = !hasEnded(record.response) && !background.runsHere(record.id);
      if (orphan) await takeOverIfGone(record, options.authenticate(request), response);
      if (request.query.stream !== "true") {
        sendUncached(response, hasEnded(record.response) ? record.response : await progressOf(record));
        return;
      }
      const after = readStartingAfter(request.query.starting_after);
      const size = await background.size(record.id);
      if (after >= size) {
        throw new InvalidRequestError(`starting_after ${after} is beyond the last event of response '${record.id}' (${size - 1})`, {
          param: "starting_after",
          code: "invalid_value",
        });
      }
      await streamBackground(response, background, record.id, after, streamContext);
      return;
    }
    const { value } = await storedOf(request);
    if (request.query.stream !== "true") {
      // As a background one's: a stored response is the caller's own, never for a cache to keep.
      sendUncached(response, value.response);
      return;
    }
    const after = readStartingAfter(request.query.starting_after);
    const writer = new SseWriter(response, sweep, options.facts, () => []);
    writer.open();
    const frames = replay(value, options.documentLinks);
    await writer.end(frames.filter((frame) => (frame.data as { sequence_number: number }).sequence_number > after));
  };

  const remove: RequestHandler = async (request, response) => {
    const record = await backgroundOf(request);
    if (record) {
      await Promise.all([background.delete(record.id), stored.delete(record.id)]);
      response.json({ id: record.id, object: "response", deleted: true });
      return;
    }
    const entry = await storedOf(request);
    await stored.delete(entry.id);
    response.json({ id: entry.id, object: "response", deleted: true });
  };

  /** Cancels a background response from any replica: the cancelled object; again, the same; a finished one is a 400. */
  const cancel: RequestHandler = async (request, response) => {
    const record = await backgroundOf(request);
    if (!record) {
      const entry = await storedOf(request);
      throw new InvalidRequestError(`Response '${entry.id}' was not created with background: true; only background responses can be cancelled`, {
        param: "response_id",
        code: "invalid_value",
      });
    }
    const outcome = await background.cancel(record);
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
    const { value } = await storedOf(request);
    response.json(pageOf(value.input, readListQuery(request), "input item"));
  };

  /** A running background response with what its answer has sent so far, read from its event log. */
  async function progressOf(record: BackgroundRecord): Promise<object> {
    return responseInProgress(record, await background.events(record.id), seconds);
  }

  /**
   * A background answer whose replica is gone (its lease ran out) is taken over by this one on a
   * retrieve (`runner.resume`), with the retrieving caller's credential (the same key: it may see
   * the response) and a place under this replica's caps; when there is none now, a later retrieve
   * tries again. Nothing happens while the replica that runs it renews its lease.
   */
  async function takeOverIfGone(record: BackgroundRecord, identity: Identity, response: ServerResponse): Promise<void> {
    let admission: Admitted;
    try {
      // A takeover asks the workspace nothing new: the caps only, not the key's rate limits.
      const { principal, account } = identity;
      const asking = { principal, account: account.id, workspace: record.workspace, asksWorkspace: false };
      const admitting = admit(response, asking, options);
      admission = admitting instanceof Promise ? await admitting : admitting;
    } catch {
      return;
    }
    try {
      await options.runner.resume(record, { identity, admission }, resumption);
    } catch (error) {
      options.logger.warn({ responseId: record.id, err: { message: errorMessage(error) } }, "background answer could not be taken over");
    }
  }

  const bearer = [{ bearer: [] }];
  const idParameter = { name: "id", in: "path", required: true, schema: { type: "string" } };
  return [
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
