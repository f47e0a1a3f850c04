import type { Identity } from "../../auth/authenticate.js";
import type { Config } from "../../config/config.js";
import { type BackgroundResponses, hasEnded } from "../../continuity/background/background-responses.js";
import type { BackgroundRecord } from "../../continuity/background/background-store.js";
import type { StoredResponses } from "../../continuity/responses/stored-responses.js";
import { replay, type StoredValue } from "../../dialects/responses/stored-value.js";
import { InvalidRequestError } from "../../errors/adapter-error.js";
import { admit } from "../admission.js";
import type { AnswerRouteOptions } from "../answer-request.js";
import { readStartingAfter, streamBackground } from "../delivery/background-delivery.js";
import { pageOf, readListQuery } from "../list-query.js";
import { sendJson, sendUncached } from "../error-response.js";
import { errorResponse } from "../openapi.js";
import { namedWorkspace } from "../resolve-workspace.js";
import type { RequestContext } from "../request-context.js";
import { type Looker, visibleBackground, visibleResponse } from "../responses/response-lookups.js";
import type { ResponseTurns } from "../responses/response-turns.js";
import { cancelledResponse, isResponseTerminal, responseInProgress, responsesResumption } from "../responses/responses-resumption.js";
import { type Route, type RouteCall, route } from "../route-table.js";
import { SseWriter } from "../sse-writer.js";
import { errorMessage } from "../../util/error-message.js";
import type { DocumentLinkSigning } from "../../answer/source-links.js";

/** What the stored-response routes need: the runner (a takeover), the edge, and the stores of responses. */
export interface StoredResponseRouteOptions extends AnswerRouteOptions {
  config: Pick<Config, "answers">;
  stored: StoredResponses<StoredValue>;
  /** Background responses: their records and event logs, in process or shared (docs/responses-api.md#background-mode). */
  background: BackgroundResponses;
  /** How a turn is stored: a background answer taken over stores its own when it completes. */
  turns: ResponseTurns;
  /** Signs the links of replayed `url_citation`s to the adapter's document page where it asks for a key (listed keys). */
  documentLinks?: DocumentLinkSigning | undefined;
}

/** A request about one response: `/v1/responses/{id}` and below. */
type ResponseCall = RouteCall<{ readonly id: string }>;

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
  const resumption = responsesResumption(options.turns, seconds);
  const lookerOf = ({ request }: ResponseCall): Looker => {
    return { principal: options.authenticate(request).principal, workspace: namedWorkspace(request) };
  };
  const storedOf = (call: ResponseCall) => visibleResponse(stored, call.params.id, lookerOf(call), "response_id");
  /** The background response of that id this caller may see (the same rule as stored responses'), or null when there is none. */
  const backgroundOf = (call: ResponseCall) => visibleBackground(background, call.params.id, lookerOf(call));
  const streamContext = { ...options.runner.context, sweep };

  async function retrieve(call: ResponseCall): Promise<void> {
    const { response, query } = call;
    const record = await backgroundOf(call);
    if (record) {
      const orphan = !hasEnded(record.response) && !background.runsHere(record.id);
      if (orphan) await takeOverIfGone(record, options.authenticate(call.request), call.context);
      if (query.stream !== "true") {
        sendUncached(response, hasEnded(record.response) ? record.response : await progressOf(record));
        return;
      }
      const after = readStartingAfter(query.starting_after);
      const size = await background.size(record.id);
      if (after >= size) {
        throw new InvalidRequestError(`starting_after ${after} is beyond the last event of response '${record.id}' (${size - 1})`, {
          param: "starting_after",
          code: "invalid_value",
        });
      }
      await streamBackground(call, background, { id: record.id, after, isTerminal: isResponseTerminal }, streamContext);
      return;
    }
    const { value } = await storedOf(call);
    if (query.stream !== "true") {
      // As a background one's: a stored response is the caller's own, never for a cache to keep.
      sendUncached(response, value.response);
      return;
    }
    const after = readStartingAfter(query.starting_after);
    const writer = new SseWriter(call, sweep, () => []);
    writer.open();
    const frames = replay(value, options.documentLinks);
    await writer.end(frames.filter((frame) => (frame.data as { sequence_number: number }).sequence_number > after));
  }

  async function remove(call: ResponseCall): Promise<void> {
    const record = await backgroundOf(call);
    if (record) {
      await Promise.all([background.delete(record.id), stored.delete(record.id)]);
      sendJson(call.response, { id: record.id, object: "response", deleted: true });
      return;
    }
    const entry = await storedOf(call);
    await stored.delete(entry.id);
    sendJson(call.response, { id: entry.id, object: "response", deleted: true });
  }

  /** Cancels a background response from any replica: the cancelled object; again, the same; a finished one is a 400. */
  async function cancel(call: ResponseCall): Promise<void> {
    const record = await backgroundOf(call);
    if (!record) {
      const entry = await storedOf(call);
      throw new InvalidRequestError(`Response '${entry.id}' was not created with background: true; only background responses can be cancelled`, {
        param: "response_id",
        code: "invalid_value",
      });
    }
    const outcome = await background.cancel(record, cancelledResponse(record));
    if (!outcome.cancelled && outcome.response.status !== "cancelled") {
      throw new InvalidRequestError(`Response '${record.id}' has already ended (${outcome.response.status}); only a response in progress can be cancelled`, {
        param: "response_id",
        code: "invalid_value",
      });
    }
    call.response.setHeader("cache-control", "no-store");
    sendJson(call.response, outcome.response);
  }

  async function inputItems(call: ResponseCall): Promise<void> {
    const { value } = await storedOf(call);
    sendJson(call.response, pageOf(value.input, readListQuery(call.query), "input item"));
  }

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
  async function takeOverIfGone(record: BackgroundRecord, identity: Identity, context: RequestContext): Promise<void> {
    let admission;
    try {
      // A takeover asks the workspace nothing new: the caps only, not the key's rate limits.
      const { principal, account } = identity;
      const asking = { principal, account: account.id, workspace: record.workspace, asksWorkspace: false };
      admission = await admit(context, asking, options);
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
    route("GET", "/v1/responses/{id}", retrieve, {
      summary: "A stored response; with `stream=true`, its events replayed (after `starting_after`)",
      security: bearer,
      parameters: [idParameter, { name: "stream", in: "query", schema: { type: "boolean" } }, { name: "starting_after", in: "query", schema: { type: "integer" } }],
      responses: {
        "200": { description: "The response", content: { "application/json": { schema: { $ref: "#/components/schemas/Response" } } } },
        "404": errorResponse("No such response for this credential and workspace"),
      },
    }),
    route("DELETE", "/v1/responses/{id}", remove, {
      summary: "Deletes a stored response",
      security: bearer,
      parameters: [idParameter],
      responses: { "200": { description: "`{id, object: \"response\", deleted: true}`" }, "404": errorResponse("No such response") },
    }),
    route("POST", "/v1/responses/{id}/cancel", cancel, {
      summary: "Cancels a background response, from any replica: its object, now `cancelled` (the upstream query is not stopped: the interface has no cancel)",
      security: bearer,
      parameters: [idParameter],
      responses: {
        "200": { description: "The cancelled response", content: { "application/json": { schema: { $ref: "#/components/schemas/Response" } } } },
        "400": errorResponse("The response was not created with `background: true`, or has already ended"),
        "404": errorResponse("No such response for this credential and workspace"),
      },
    }),
    route("GET", "/v1/responses/{id}/input_items", inputItems, {
      summary: "The input items of a stored response, as OpenAI's list (`order`, `after`, `limit`)",
      security: bearer,
      parameters: [
        idParameter,
        { name: "order", in: "query", schema: { type: "string", enum: ["asc", "desc"] } },
        { name: "after", in: "query", schema: { type: "string" } },
        { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 100 } },
      ],
      responses: { "200": { description: "A list of items" }, "404": errorResponse("No such response") },
    }),
  ];
}
