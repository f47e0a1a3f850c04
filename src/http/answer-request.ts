import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { z } from "zod";
import type { LocalAnswerJob } from "../answer/local-answer.js";
import type { SchemaService } from "../structured/schema-service.js";
import type { AnswerRunner } from "./answer-runner.js";
import { admit, type Admitted, type AdmissionOptions } from "./admission.js";
import type { Authenticator, Identity } from "../auth/authenticate.js";
import type { Config, LimitSettings } from "../config/config.js";
import { type ChatUiTask, taskName } from "../chat-ui-tasks/chat-ui-task.js";
import type { ModelChoice } from "../core/model.js";
import type { ExpectedCost } from "../limits/rate-limits.js";
import { RequestValidationError } from "../errors/adapter-error.js";
import { inspectJson } from "./inspect-json.js";
import type { Clock } from "../util/clock.js";
import type { Ids } from "../util/ids.js";
import type { Delivery } from "./delivery/delivery.js";
import type { RequestContext } from "./request-context.js";
import { readJsonBody } from "./request-body.js";
import type { RouteCall } from "./route-table.js";
import type { KeepAliveSweeps } from "./sse-writer.js";
import { validateRequest } from "./validate-request.js";

/** What every answer route (chat completions, Responses, MCP) is built from: the one runner, and the edge's admission. */
export interface AnswerRouteOptions extends AdmissionOptions {
  runner: AnswerRunner;
  /** The caller's JSON Schemas, checked and kept (docs/structured-answers.md#the-schema-is-untrusted). */
  schemas: SchemaService;
  authenticate: Authenticator;
  sweeps: KeepAliveSweeps;
  clock: Clock;
  ids: Ids;
  logger: Logger;
}

/**
 * One answer request as the order of checks reads it: an HTTP request (`RouteCall`), or a message on
 * a WebSocket (docs/responses-api.md#websocket-mode), whose headers are its upgrade request's, whose
 * body is the message, and whose context is its own (`RequestContexts.detached`).
 */
export interface AnswerCall {
  /** The HTTP request: its headers (credential, workspace, formats) and, unless `message` is given, its body. */
  readonly request: IncomingMessage;
  /** Where the edge's response headers go (`x-ratelimit-*`, `service-*`): the HTTP response; none after a WebSocket's upgrade. */
  readonly response: Pick<ServerResponse, "setHeader">;
  readonly context: RequestContext;
  /** The request's JSON body when it came as a message (a socket's, bounded by its `maxPayload`); else read from `request`. */
  readonly message?: unknown;
}

/** An answer request admitted at the edge: who asks, its validated body, its model and workspace. */
export interface AdmittedRequest<Body> {
  identity: Identity;
  body: Body;
  model: ModelChoice;
  workspace: string;
  /** Its admission (`admit`): the meter of the answer's tokens, and what it holds. */
  admission: Admitted;
}

/** An answer request read at the edge and valid, not yet admitted under the limits. */
export type ValidAnswerRequest<Body> = Omit<AdmittedRequest<Body>, "admission">;

/** The configuration sections every answer route reads with: its edge's (the limits) and the plan's (the upstream's default workspace and mode field). */
export type EdgeSetting = "limits" | "upstream";

/** The settings the edge of an answer route reads a request with. */
type EdgeOptions = AnswerRouteOptions & { config: Pick<Config, EdgeSetting> };

/**
 * Step 1 of the order of checks (`answerInOrder`): authenticate (a 401 before any body is read),
 * read the JSON body within the limits, validate it with the dialect's schema and the workspace (a
 * 422 listing every problem at once).
 */
export async function readAnswerRequest<Schema extends z.ZodType<{ model: string }>>(
  request: IncomingMessage,
  schema: Schema,
  options: EdgeOptions,
  message?: unknown,
): Promise<ValidAnswerRequest<z.output<Schema>>> {
  const { limits, upstream } = options.config;
  const identity = options.authenticate(request);
  const raw = message === undefined ? await readJsonBody(request, limits.bodyLimitBytes) : message;
  const { body, model, workspace } = validateRequest(request, raw, schema, upstream.defaultWorkspace, limits.maxJsonDepth);
  return { identity, body, model, workspace };
}

/**
 * Step 4, admission (`admit`), until the request ends: a workspace answer's expected `cost` is
 * reserved under the key's token limits, and the key's limits are told in the `x-ratelimit-*`
 * headers. A chat UI's housekeeping (`task`, answered by the adapter: docs/chat-ui-tasks.md) takes
 * its place under the per-process caps like any answer but is not counted against the key's rate
 * limits, and is told in the log and the `Service-Chat-Ui-Task` header.
 */
export async function admitValidRequest<Body>(
  call: Pick<AnswerCall, "response" | "context">,
  valid: ValidAnswerRequest<Body>,
  options: AdmissionOptions,
  asking: { cost: ExpectedCost; task?: undefined } | { task: ChatUiTask; cost?: undefined },
): Promise<AdmittedRequest<Body>> {
  const { response, context } = call;
  const { principal, account } = valid.identity;
  const { task, cost } = asking;
  const request = { principal, account: account.id, workspace: valid.workspace, asksWorkspace: task === undefined, cost };
  const admitting = admit(context, request, options);
  if (task) {
    const chatUiTask = taskName(task);
    context.answeredLocally({ workspace: valid.workspace, mode: valid.model.mode, chatUiTask });
    response.setHeader("service-chat-ui-task", chatUiTask);
  }
  const admission = await admitting;
  tellLimits(response, admission);
  return { ...valid, admission };
}

/** The key's limits in the response's `x-ratelimit-*` headers (docs/rate-limits.md#what-a-client-sees). */
export function tellLimits(response: Pick<ServerResponse, "setHeader">, admission: Admitted): void {
  for (const [name, value] of Object.entries(admission.headers)) response.setHeader(name, value);
}

/** An MCP request's JSON body, read within the limits of every route (size, media type, nesting). */
export async function readToolRequestBody(request: IncomingMessage, limits: LimitSettings): Promise<unknown> {
  const body = await readJsonBody(request, limits.bodyLimitBytes);
  const hazards = inspectJson(body, limits.maxJsonDepth);
  if (hazards.length > 0) throw new RequestValidationError(hazards);
  return body;
}

/** A chat UI's housekeeping the adapter answers itself (docs/chat-ui-tasks.md): the task, its answer, and its delivery. */
export interface LocalTurn {
  task: ChatUiTask;
  job: LocalAnswerJob;
  delivery: Delivery<unknown>;
}

/** An answer request once read: the exchange, the valid request, and what the route read of it beyond its schema. */
export interface ReadAnswer<Body, Read, Call extends AnswerCall = RouteCall> {
  call: Call;
  valid: ValidAnswerRequest<Body>;
  read: Read;
}

/** ... and what it asks that the workspace can do (its structure), once what it cannot was refused. */
export interface AskedAnswer<Body, Read, Asked, Call extends AnswerCall = RouteCall>
  extends ReadAnswer<Body, Read, Call> {
  asked: Asked;
}

/** ... once admitted. */
export interface AdmittedAnswer<Body, Read, Asked, Call extends AnswerCall = RouteCall>
  extends AskedAnswer<Body, Read, Asked, Call> {
  admission: Admitted;
}

/** ... and what it continues. */
export interface ContinuedAnswer<Body, Read, Asked, Found, Call extends AnswerCall = RouteCall>
  extends AdmittedAnswer<Body, Read, Asked, Call> {
  found: Found;
}

/** What an answer route brings to the order of checks: its schema, and each step's reading of its own request. */
export interface AnswerSteps<Body extends { model: string }, Read, Asked, Found, Call extends AnswerCall = RouteCall> {
  /** The dialect's request schema (step 1). */
  schema: z.ZodType<Body>;
  /** Step 1, the rest of reading: what the route reads of the valid request (its messages, input items, id); parameters that contradict each other are a 400 here. */
  read(call: Call, valid: ValidAnswerRequest<Body>): Read;
  /** Step 2: a chat UI's housekeeping the adapter answers itself instead, or null. */
  housekeeping(request: ReadAnswer<Body, Read, Call>): LocalTurn | null;
  /** Step 3: what the workspace cannot do, refused (400; ignored under `LENIENT_PARAMETERS=on`); returns what the request asks (its structure). */
  refuse(request: ReadAnswer<Body, Read, Call>): Asked;
  /** Step 4's reservation: what the answer is expected to cost (its prompt, mode and choices: docs/rate-limits.md#reservations). */
  cost(request: AskedAnswer<Body, Read, Asked, Call>): ExpectedCost;
  /** Step 5: costly inputs (the caller's JSON Schema), checked once admitted so that the limits count a request they refuse. */
  check(request: AdmittedAnswer<Body, Read, Asked, Call>): void | Promise<void>;
  /** Step 6: what the request continues (the continuity stores: a 404 for what names nothing of this caller, a 503 when a store cannot answer). */
  continue(request: AdmittedAnswer<Body, Read, Asked, Call>): Promise<Found>;
  /** Step 7: the answer planned (`runner.plan`), its delivery built from the plan, and run (`runner.run`). */
  run(request: ContinuedAnswer<Body, Read, Asked, Found, Call>): Promise<void>;
}

/**
 * The one order of checks of the answer routes (docs/architecture/edge.md#the-order-of-checks), for
 * chat completions and the Responses API alike:
 *
 * 1. read: authenticate, then the body within the limits, the dialect's schema and the workspace
 *    (401, 413, 415, 422), and the route's own reading of it;
 * 2. housekeeping: a chat UI's title or tags request is answered by the adapter (caps only);
 * 3. refuse: what the workspace cannot do (400), before it costs the key anything;
 * 4. admit: the caps and the key's rate limits, its expected cost reserved (429): from here the request counts;
 * 5. check: costly inputs (a caller's JSON Schema, 400), counted by the limits;
 * 6. continue: the thread it continues (404, 503);
 * 7. run: planned, delivered, remembered (the runner).
 *
 * Each step is the route's reading of its own request; the order is this function's. A message on a
 * WebSocket (`AnswerCall.message`) takes the same order, step by step.
 */
export function answerInOrder<Body extends { model: string }, Read, Asked, Found, Call extends AnswerCall = RouteCall>(
  steps: AnswerSteps<Body, Read, Asked, Found, Call>,
  options: EdgeOptions,
): (call: Call) => Promise<void> {
  return async (call) => {
    const valid = await readAnswerRequest(call.request, steps.schema, options, call.message);
    const reading: ReadAnswer<Body, Read, Call> = { call, valid, read: steps.read(call, valid) };
    const local = steps.housekeeping(reading);
    if (local) {
      await admitValidRequest(call, valid, options, { task: local.task });
      await options.runner.answerLocally(local.job, local.delivery);
      return;
    }
    const asking: AskedAnswer<Body, Read, Asked, Call> = { ...reading, asked: steps.refuse(reading) };
    const { admission } = await admitValidRequest(call, valid, options, { cost: steps.cost(asking) });
    const admitted: AdmittedAnswer<Body, Read, Asked, Call> = { ...asking, admission };
    await steps.check(admitted);
    const found = await steps.continue(admitted);
    await steps.run({ ...admitted, found });
  };
}
