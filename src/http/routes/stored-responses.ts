import type { Request, RequestHandler } from "express";
import type { Identity } from "../../auth/authenticate.js";
import { hasEnded } from "../../continuity/background-responses.js";
import { resumeStreamEncoder } from "../../dialects/responses/resume-stream-encoder.js";
import { pageOf, readListQuery } from "../list-query.js";
import type { BackgroundResume, StoredResponses } from "../../continuity/stored-responses.js";
import { replay } from "../../dialects/responses/stored-value.js";
import { InvalidRequestError } from "../../errors/adapter-error.js";
import type { BackgroundResponses } from "../../continuity/background-responses.js";
import type { BackgroundRecord, BackgroundStore } from "../../continuity/background-store.js";
import { RESPONSE_ID } from "../../dialects/responses/response-request.js";
import { readStartingAfter, sendBackground, streamBackground } from "../background-delivery.js";
import type { AnswerRouteOptions } from "../answer-request.js";
import { errorResponse } from "../openapi.js";
import type { Route } from "../route-table.js";
import { SseWriter } from "../sse-writer.js";
import { UNTRACED_ANSWER } from "../../telemetry/answer-trace.js";

/** What the stored-response routes need. */
export interface StoredResponseRouteOptions extends Pick<AnswerRouteOptions, "authenticate" | "facts" | "sweeps" | "lifecycle" | "logger" | "answers" | "clock" | "limit"> {
  config: { sseKeepAliveMs: number };
  stored: StoredResponses;
  /** Background responses: their records and event logs, in process or shared (docs/responses-api.md#background-mode). */
  background: BackgroundResponses;
  /** Where background responses' records live (looked up by retrieve, cancel, delete). */
  backgroundRecords: Pick<BackgroundStore, "get" | "size" | "delete" | "events">;
}

/**
 * The stored responses of the Responses API (docs/responses-api.md): retrieve (with `stream=true`
 * its events replayed through the same SSE writer as a live answer, after `starting_after`),
 * delete, and list the input items. Only the credential that created one sees it, and only in the
 * workspace the request names (if it names one).
 */
export function storedResponseRoutes(options: StoredResponseRouteOptions): Route[] {
  const { stored } = options;
  const sweep = options.sweeps.of(options.config.sseKeepAliveMs);
  const requestWorkspace = (request: Request): string | undefined => {
    const header = request.headers["service-workspace"];
    return typeof header === "string" && header !== "" ? header : undefined;
  };
  const storedOf = (request: Request) =>
    stored.visible((request.params as { id: string }).id, options.authenticate(request).principal, requestWorkspace(request), "response_id");
  const streamContext = { sweep, facts: options.facts, lifecycle: options.lifecycle, logger: options.logger };
  const seconds = () => Math.floor(options.clock.now() / 1000);

  /** A background response this caller may see (the same rule as stored responses'), or null when there is none of that id. */
  const backgroundOf = async (request: Request): Promise<BackgroundRecord | null> => {
    const { id } = request.params as { id: string };
    const { principal } = options.authenticate(request);
    const workspace = requestWorkspace(request);
    const record = RESPONSE_ID.test(id) ? await stored.read(() => options.backgroundRecords.get(id), `'${id}'`) : null;
    const mine = record && record.principal === principal && (workspace === undefined || record.workspace === workspace);
    return mine ? record : null;
  };

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
      const size = await stored.read(() => options.backgroundRecords.size(record.id), `'${record.id}'`);
      if (after >= (size ?? 0)) {
        throw new InvalidRequestError(`starting_after ${after} is beyond the last event of response '${record.id}' (${(size ?? 0) - 1})`, {
          param: "starting_after",
          code: "invalid_value",
        });
      }
      await streamBackground(response, options.background, record.id, after, streamContext);
      return;
    }
    const { value } = await storedOf(request);
    if (request.query.stream !== "true") {
      response.json(value.response);
      return;
    }
    const after = readStartingAfter(request.query.starting_after);
    const writer = new SseWriter(response, sweep, options.facts, () => []);
    writer.open();
    for (const frame of replay(value)) {
      if ((frame.data as { sequence_number: number }).sequence_number > after) await writer.send(frame);
    }
    writer.end();
  };

  const remove: RequestHandler = async (request, response) => {
    const record = await backgroundOf(request);
    if (record) {
      await Promise.all([options.backgroundRecords.delete(record.id), stored.delete(record.id)]);
      response.json({ id: record.id, object: "response", deleted: true });
      return;
    }
    const { entry } = await storedOf(request);
    await stored.delete(entry.id);
    response.json({ id: entry.id, object: "response", deleted: true });
  };

  /** Cancels a background response from any replica: the cancelled object; again, the same; a finished one is a 400. */
  const cancel: RequestHandler = async (request, response) => {
    const record = await backgroundOf(request);
    if (!record) {
      const { entry } = await storedOf(request);
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
    const { value } = await storedOf(request);
    response.json(pageOf(value.input, readListQuery(request), "input item"));
  };

  /**
   * A running background response with what its answer has sent so far (its output items, still in
   * progress), read from its event log; the record's object when the log cannot say more.
   */
  async function progressOf(record: BackgroundRecord): Promise<object> {
    const frames = await stored.read(() => options.backgroundRecords.events(record.id, -1), `'${record.id}'`);
    const encoder = resumeStreamEncoder((record.resume as BackgroundResume).turn.meta, seconds, frames ?? []);
    return encoder ? encoder.current(null) : record.response;
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
          // Taken over from a replica that died: its span died with it.
          trace: UNTRACED_ANSWER,
        });
        const beforeEnd = () => stored.storeTurn(resume.turn, encoder);
        return { record, answer, encoder, controller, beforeEnd, release };
      });
      if (!taken) release();
    } catch (error) {
      release();
      options.logger.warn({ responseId: record.id, err: { message: (error as Error).message } }, "background answer could not be taken over");
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
