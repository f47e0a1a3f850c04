import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { z } from "zod";
import type { AnswerService, RunningAnswer } from "../answer/answer-service.js";
import type { Authenticator, Identity } from "../auth/authenticate.js";
import type { Config } from "../config/config.js";
import type { Conversations } from "../conversations/conversations.js";
import type { ModelChoice } from "../core/model.js";
import { ClientClosedError, toAdapterError } from "../errors/adapter-error.js";
import type { RateLimits, WorkspaceLimits } from "../limits/rate-limits.js";
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
  /** Limits per client key and workspace (`RATE_LIMIT_*`); undefined when none is configured. */
  rateLimits?: RateLimits | undefined;
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
  admission: AnswerAdmission;
}

/** What the limits step hands an answer route for the tokens-per-minute limit. */
export interface AnswerAdmission {
  /** Whether the answer's tokens count (`RATE_LIMIT_TPM`): its usage must be counted even when the client does not ask for it. */
  readonly countsTokens: boolean;
  /** The answer, with its usage charged to the key's tokens per minute once counted (the answer itself when no TPM limit applies). */
  meter(answer: RunningAnswer): RunningAnswer;
}

const UNLIMITED: AnswerAdmission = { countsTokens: false, meter: (answer) => answer };

/**
 * The limits step of every answer route (chat completions, Responses, MCP tool calls): may this
 * client key start an answer in this workspace now? Takes a place under the per-process caps and,
 * with `RATE_LIMIT_*` set, counts the request against the key's limits in the workspace (shared
 * through Redis with `REDIS_URL`) and sets OpenAI's `x-ratelimit-*` headers; over a limit it throws
 * a `RateLimitError` (429 with `retry-after`), before any upstream call. Everything taken is given
 * back when the response closes, however it ends. With no limit in the workspace it costs nothing:
 * the answer is then synchronous (a promise only when a limit applies).
 */
export function admitAnswer(
  response: ServerResponse,
  principal: string,
  workspace: string,
  options: Pick<AnswerRouteOptions, "limit" | "rateLimits" | "facts">,
): AnswerAdmission | Promise<AnswerAdmission> {
  options.facts.whenClosed(response, options.limit.acquire(workspace));
  const limits = options.rateLimits?.limitsOf(workspace);
  if (!limits || !options.rateLimits) return UNLIMITED;
  return admitUnderLimits(response, principal, workspace, limits, options.rateLimits, options.facts);
}

/** The key's limits in the workspace (a refusal is thrown as the 429), then the response's headers. */
async function admitUnderLimits(
  response: ServerResponse,
  principal: string,
  workspace: string,
  limits: WorkspaceLimits,
  rateLimits: RateLimits,
  facts: ResponseFacts,
): Promise<AnswerAdmission> {
  const admission = await rateLimits.admit(principal, workspace, limits);
  facts.whenClosed(response, admission.release);
  // Freed as the response's last bytes are written, not a turn later at 'close': a client that
  // sends its next request at once (to any replica) finds its slot free.
  response.once("prefinish", admission.release);
  for (const [name, value] of Object.entries(admission.headers)) response.setHeader(name, value);
  if (!admission.countsTokens) return UNLIMITED;
  return {
    countsTokens: true,
    meter: (answer) => ({
      ...answer,
      usage: async (sent) => {
        const usage = await answer.usage(sent);
        admission.charge(usage.promptTokens + usage.completionTokens);
        return usage;
      },
    }),
  };
}

/**
 * The edge of every answer route (docs/architecture.md#data-flow-of-one-request): authenticate, read
 * the JSON body, validate it with the dialect's schema (and the workspace), and admit it under the
 * limits (`admitAnswer`) until the response closes.
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
  const admitted = admitAnswer(response, identity.principal, workspace, options);
  return { identity, body, model, workspace, admission: admitted instanceof Promise ? await admitted : admitted };
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
