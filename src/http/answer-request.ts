import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { z } from "zod";
import type { AnswerService } from "../answer/answer-service.js";
import type { Authenticator, Identity } from "../auth/authenticate.js";
import type { Config } from "../config/config.js";
import type { Conversations } from "../conversations/conversations.js";
import type { ModelChoice } from "../core/model.js";
import { isId } from "../core/ids.js";
import { ClientClosedError, PermissionDeniedError, RequestValidationError, toAdapterError } from "../errors/adapter-error.js";
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
      if (toAdapterError(error) instanceof ClientClosedError && response.destroyed) return;
      reportError(error, response, options.logger, options.facts.of(response).requestId);
    });
  };
}
