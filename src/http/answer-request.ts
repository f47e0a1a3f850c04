import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { z } from "zod";
import type { AnswerService } from "../answer/answer-service.js";
import type { Authenticator, Identity } from "../auth/authenticate.js";
import type { Config } from "../config/config.js";
import type { Conversations } from "../conversations/conversations.js";
import type { ModelChoice } from "../core/model.js";
import { ClientClosedError, toAdapterError } from "../errors/adapter-error.js";
import type { Clock } from "../util/clock.js";
import type { ConcurrencyLimit } from "./concurrency-limit.js";
import { reportError } from "./error-response.js";
import type { Lifecycle } from "./lifecycle.js";
import { readJsonBody } from "./request-body.js";
import type { AnswerTrace } from "../telemetry/answer-trace.js";
import type { ResponseFacts } from "./request-log.js";
import type { FastHandler } from "./route-table.js";
import type { KeepAliveSweeps } from "./sse-writer.js";
import { validateRequest } from "./validate-request.js";

/** What every answer route (chat completions, responses) is built from. */
export interface AnswerRouteOptions {
  answers: AnswerService;
  authenticate: Authenticator;
  conversations: Conversations;
  limit: ConcurrencyLimit;
  lifecycle: Lifecycle;
  facts: ResponseFacts;
  sweeps: KeepAliveSweeps;
  clock: Clock;
  logger: Logger;
  newQueryId?: (() => string) | undefined;
}

/** An answer request admitted at the edge: who asks, its validated body, its model and workspace. */
export interface AdmittedRequest<Body> {
  identity: Identity;
  body: Body;
  model: ModelChoice;
  workspace: string;
}

/**
 * The edge of every answer route (docs/architecture.md#data-flow-of-one-request): authenticate, read
 * the JSON body, validate it with the dialect's schema (and the workspace), and take a place under
 * the concurrency caps until the response closes.
 */
export async function admitAnswerRequest<Schema extends z.ZodType<{ model: string }>>(
  request: IncomingMessage,
  response: ServerResponse,
  schema: Schema,
  options: AnswerRouteOptions & { config: Pick<Config, "bodyLimitBytes" | "defaultWorkspace" | "maxJsonDepth"> },
): Promise<AdmittedRequest<z.output<Schema>>> {
  const { config } = options;
  const identity = options.authenticate(request);
  const raw = await readJsonBody(request, config.bodyLimitBytes);
  const { body, model, workspace } = validateRequest(request, raw, schema, config.defaultWorkspace, config.maxJsonDepth);
  options.facts.whenClosed(response, options.limit.acquire(workspace));
  return { identity, body, model, workspace };
}

/**
 * Starts the `chat {model}` span of an admitted request of the OpenAI dialects (chat completions,
 * Responses): undefined when tracing is off. The answer service gets it in `AnswerJob.trace`.
 */
export function traceChat(
  response: ServerResponse,
  facts: ResponseFacts,
  admitted: AdmittedRequest<{ model: string; stream?: boolean | null | undefined }>,
): AnswerTrace | undefined {
  const { identity, body, model, workspace } = admitted;
  return facts.traceAnswer(response, {
    operation: "chat",
    model: body.model,
    mode: model.mode,
    workspace,
    stream: body.stream === true,
    principal: identity.principal,
  });
}

/** A fast-path handler around an answer route: whatever it throws becomes the error response (or nothing, if the client left). */
export function answerHandler(
  handle: (request: IncomingMessage, response: ServerResponse) => Promise<void>,
  options: Pick<AnswerRouteOptions, "facts" | "logger">,
): FastHandler {
  return (request, response) => {
    handle(request, response).catch((error: unknown) => {
      const failure = toAdapterError(error);
      if (failure instanceof ClientClosedError && response.destroyed) return;
      const known = options.facts.of(response);
      known.answer?.fail(failure);
      reportError(error, response, options.logger, known.requestId);
    });
  };
}
