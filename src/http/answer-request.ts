import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { z } from "zod";
import type { SchemaValidation } from "../structured/schema-validator.js";
import type { AnswerRunner } from "./answer-runner.js";
import { admit, type Admitted, type AdmissionOptions } from "./admission.js";
import type { Authenticator, Identity } from "../auth/authenticate.js";
import type { Config, LimitSettings } from "../config/config.js";
import { type ChatUiTask, taskName } from "../chat-ui-tasks/chat-ui-task.js";
import type { ModelChoice } from "../core/model.js";
import type { ExpectedCost } from "../limits/rate-limits.js";
import { ClientClosedError, RequestValidationError, toAdapterError } from "../errors/adapter-error.js";
import { inspectJson } from "./inspect-json.js";
import type { Clock } from "../util/clock.js";
import type { Ids } from "../util/ids.js";
import { reportError } from "./error-response.js";
import { readJsonBody } from "./request-body.js";
import type { RequestContexts } from "./request-context.js";
import type { FastHandler } from "./route-table.js";
import type { KeepAliveSweeps } from "./sse-writer.js";
import { validateRequest } from "./validate-request.js";

/** What every answer route (chat completions, Responses, MCP) is built from: the one runner, and the edge's admission. */
export interface AnswerRouteOptions extends AdmissionOptions {
  runner: AnswerRunner;
  /** The caller's JSON Schemas, checked and kept (docs/structured-answers.md#the-schema-is-untrusted). */
  schemas: SchemaValidation;
  authenticate: Authenticator;
  facts: RequestContexts;
  sweeps: KeepAliveSweeps;
  clock: Clock;
  ids: Ids;
  logger: Logger;
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
 * The edge of every answer route (docs/architecture.md#data-flow-of-one-request): authenticate, read
 * the JSON body, validate it with the dialect's schema (and the workspace); `admitValidRequest` follows. A route
 * looks at a valid request before it is admitted when some requests never become a workspace
 * answer (a chat UI's housekeeping, docs/chat-ui-tasks.md).
 */
export async function readAnswerRequest<Schema extends z.ZodType<{ model: string }>>(
  request: IncomingMessage,
  schema: Schema,
  options: EdgeOptions,
): Promise<ValidAnswerRequest<z.output<Schema>>> {
  const { limits, upstream } = options.config;
  const identity = options.authenticate(request);
  const raw = await readJsonBody(request, limits.bodyLimitBytes);
  const { body, model, workspace } = validateRequest(request, raw, schema, upstream.defaultWorkspace, limits.maxJsonDepth);
  return { identity, body, model, workspace };
}

/**
 * The admission of an answer route's valid request (`admit`), until the response ends: a workspace
 * answer's expected `cost` is reserved under the key's token limits. A chat UI's housekeeping
 * (`task`, answered by the adapter: docs/chat-ui-tasks.md) takes its place under the per-process
 * caps like any answer but is not counted against the key's rate limits, and is told in the log and
 * the `Service-Chat-Ui-Task` header.
 */
export async function admitValidRequest<Body>(
  response: ServerResponse,
  valid: ValidAnswerRequest<Body>,
  options: AdmissionOptions,
  asking: { cost: ExpectedCost; task?: undefined } | { task: ChatUiTask; cost?: undefined },
): Promise<AdmittedRequest<Body>> {
  const { principal, account } = valid.identity;
  const { task, cost } = asking;
  const request = { principal, account: account.id, workspace: valid.workspace, asksWorkspace: task === undefined, cost };
  const admitted = admit(response, request, options);
  if (task) {
    const chatUiTask = taskName(task);
    options.facts.of(response).answeredLocally({ workspace: valid.workspace, mode: valid.model.mode, chatUiTask });
    response.setHeader("service-chat-ui-task", chatUiTask);
  }
  return { ...valid, admission: admitted instanceof Promise ? await admitted : admitted };
}

/** An MCP request's JSON body, read within the limits of every route (size, media type, nesting). */
export async function readToolRequestBody(request: IncomingMessage, limits: LimitSettings): Promise<unknown> {
  const body = await readJsonBody(request, limits.bodyLimitBytes);
  const hazards = inspectJson(body, limits.maxJsonDepth);
  if (hazards.length > 0) throw new RequestValidationError(hazards);
  return body;
}

/** A fast-path handler around an answer route: whatever it throws becomes the error response (or nothing, if the client left). */
export function answerHandler(
  handle: (request: IncomingMessage, response: ServerResponse, params: Record<string, string>) => Promise<void>,
  options: Pick<AnswerRouteOptions, "facts" | "logger">,
): FastHandler {
  return (request, response, params) => {
    handle(request, response, params ?? {}).catch((error: unknown) => {
      const failure = toAdapterError(error);
      if (failure instanceof ClientClosedError && response.destroyed) return;
      const context = options.facts.of(response);
      context.answer?.fail(failure);
      reportError(error, response, options.logger, context.id);
    });
  };
}
