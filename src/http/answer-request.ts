import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { z } from "zod";
import type { AnswerService } from "../answer/answer-service.js";
import { NOT_METERED, type UsageMeter } from "./answer-runner.js";
import type { Authenticator, Identity } from "../auth/authenticate.js";
import type { Config } from "../config/config.js";
import { type ChatUiTask, taskName } from "../chat-ui-tasks/chat-ui-task.js";
import type { Conversations } from "../conversations/conversations.js";
import type { ModelChoice } from "../core/model.js";
import { isId } from "../core/ids.js";
import { ClientClosedError, PermissionDeniedError, RequestValidationError, toAdapterError } from "../errors/adapter-error.js";
import type { RateLimits, WorkspaceLimits } from "../limits/rate-limits.js";
import { originAllowed } from "./cors.js";
import { inspectJson } from "./inspect-json.js";
import type { Clock } from "../util/clock.js";
import type { ConcurrencyLimit } from "./concurrency-limit.js";
import { reportError } from "./error-response.js";
import type { Lifecycle } from "./lifecycle.js";
import { readJsonBody } from "./request-body.js";
import { resolveWorkspace } from "./request-context.js";
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

/** What the limits step hands the answer runner for the tokens-per-minute limit. */
export type AnswerAdmission = UsageMeter;

/** The admission of a request no rate limit applies to: nothing to count. */
export const UNLIMITED: AnswerAdmission = NOT_METERED;

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
  return admitUnderRateLimits(response, principal, workspace, options);
}

/**
 * The key's rate limits alone, for a request that already holds its place under the per-process
 * caps: an MCP tool call that starts an answer (the MCP edge takes the caps for every request,
 * listing tools included). Synchronous when no limit applies in the workspace.
 */
export function admitUnderRateLimits(
  response: ServerResponse,
  principal: string,
  workspace: string,
  options: Pick<AnswerRouteOptions, "rateLimits" | "facts">,
): AnswerAdmission | Promise<AnswerAdmission> {
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
  return { countsTokens: true, charge: (usage) => admission.charge(usage.promptTokens + usage.completionTokens) };
}

/** An answer request read at the edge and valid, not yet admitted under the limits. */
export type ValidAnswerRequest<Body> = Omit<AdmittedRequest<Body>, "admission">;

/** The settings every answer route reads with: its edge's and the plan's. */
export type EdgeSetting = "bodyLimitBytes" | "defaultWorkspace" | "maxJsonDepth" | "maxMessages" | "modeField";

/** The settings the edge of an answer route reads a request with. */
type EdgeOptions = AnswerRouteOptions & { config: Pick<Config, "bodyLimitBytes" | "defaultWorkspace" | "maxJsonDepth"> };

/**
 * The edge of every answer route (docs/architecture.md#data-flow-of-one-request): authenticate, read
 * the JSON body, validate it with the dialect's schema (and the workspace), and admit it under the
 * limits (`admitAnswer`) until the response closes.
 */
export async function admitAnswerRequest<Schema extends z.ZodType<{ model: string }>>(
  request: IncomingMessage,
  response: ServerResponse,
  schema: Schema,
  options: EdgeOptions,
): Promise<AdmittedRequest<z.output<Schema>>> {
  return admitValidRequest(response, await readAnswerRequest(request, schema, options), options);
}

/**
 * The first half of `admitAnswerRequest`: authenticate, read the JSON body, validate it. A route
 * looks at a valid request before it is admitted when some requests never become a workspace
 * answer (a chat UI's housekeeping, docs/chat-ui-tasks.md).
 */
export async function readAnswerRequest<Schema extends z.ZodType<{ model: string }>>(
  request: IncomingMessage,
  schema: Schema,
  options: EdgeOptions,
): Promise<ValidAnswerRequest<z.output<Schema>>> {
  const { config } = options;
  const identity = options.authenticate(request);
  const raw = await readJsonBody(request, config.bodyLimitBytes);
  const { body, model, workspace } = validateRequest(request, raw, schema, config.defaultWorkspace, config.maxJsonDepth);
  return { identity, body, model, workspace };
}

/** The second half of `admitAnswerRequest`: the valid request admitted under the caps and the key's rate limits. */
export async function admitValidRequest<Body>(
  response: ServerResponse,
  valid: ValidAnswerRequest<Body>,
  options: Pick<AnswerRouteOptions, "limit" | "rateLimits" | "facts">,
): Promise<AdmittedRequest<Body>> {
  const admitted = admitAnswer(response, valid.identity.principal, valid.workspace, options);
  return { ...valid, admission: admitted instanceof Promise ? await admitted : admitted };
}

/**
 * The admission of a chat UI's housekeeping, which the adapter answers itself (docs/chat-ui-tasks.md):
 * a place under the per-process caps until the response closes, and not counted against the key's
 * rate limits; told in the log and the `Service-Chat-Ui-Task` header.
 */
export function admitLocalTask(
  response: ServerResponse,
  valid: ValidAnswerRequest<unknown>,
  task: ChatUiTask,
  options: Pick<AnswerRouteOptions, "limit" | "facts">,
): void {
  options.facts.whenClosed(response, options.limit.acquire(valid.workspace));
  Object.assign(options.facts.of(response), { workspace: valid.workspace, mode: valid.model.mode, chatUiTask: taskName(task) });
  response.setHeader("service-chat-ui-task", taskName(task));
}

/** A tool request (MCP) admitted at the edge: who asks, in which workspace. */
export interface AdmittedToolRequest {
  identity: Identity;
  workspace: string;
}

/**
 * The edge of the MCP route (docs/architecture.md#mcp-tools), the same steps as an answer route's
 * where a tool request has them: a browser origin the deployment does not allow is refused (the
 * MCP transport's guard against DNS rebinding), then authenticate, then the workspace (the
 * `Service-Workspace` header, else the path's `/mcp/{workspace}`, else the default), then a place
 * under the concurrency caps until the response closes. The body is read after
 * (`readToolRequestBody`), since its problems are JSON-RPC errors.
 */
export function admitToolRequest(
  request: IncomingMessage,
  response: ServerResponse,
  pathWorkspace: string | undefined,
  options: Pick<AnswerRouteOptions, "authenticate" | "facts" | "limit"> & { config: Pick<Config, "defaultWorkspace" | "corsOrigins"> },
): AdmittedToolRequest {
  const { origin } = request.headers;
  if (origin !== undefined && !originAllowed(origin, options.config.corsOrigins)) {
    throw new PermissionDeniedError(`Origin '${origin}' may not call the MCP endpoint; a deployment that serves browser clients lists their origins in CORS_ORIGINS`, {
      code: "origin_not_allowed",
    });
  }
  const identity = options.authenticate(request);
  if (pathWorkspace !== undefined && !isId(pathWorkspace)) {
    throw new RequestValidationError([
      { loc: ["path", "workspace"], msg: "String should match the id pattern (letters, digits and ._:-, at most 128)", type: "string_pattern_mismatch", input: pathWorkspace },
    ]);
  }
  const resolved = resolveWorkspace(request, pathWorkspace, options.config.defaultWorkspace);
  if ("issue" in resolved) {
    throw new RequestValidationError([{ ...resolved.issue, msg: resolved.issue.type === "missing" ? "Field required: send a Service-Workspace header, or use /mcp/<workspace>" : resolved.issue.msg }]);
  }
  options.facts.whenClosed(response, options.limit.acquire(resolved.workspace));
  return { identity, workspace: resolved.workspace };
}

/** An MCP request's JSON body, read within the limits of every route (size, media type, nesting). */
export async function readToolRequestBody(request: IncomingMessage, config: Pick<Config, "bodyLimitBytes" | "maxJsonDepth">): Promise<unknown> {
  const body = await readJsonBody(request, config.bodyLimitBytes);
  const hazards = inspectJson(body, config.maxJsonDepth);
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
      const known = options.facts.of(response);
      known.answer?.fail(failure);
      reportError(error, response, options.logger, known.requestId);
    });
  };
}
