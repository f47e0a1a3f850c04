import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { Metrics } from "../metrics/metrics.js";

/** What a request's handling learnt that its log line and metrics report. */
export interface RequestFacts {
  requestId: string;
  workspace?: string;
  mode?: string;
  queryIds?: string[];
  continued?: boolean;
  /** Run when the response closes (one listener per response instead of one per interested part). */
  onClose?: (() => void)[];
}

const facts = new WeakMap<ServerResponse, RequestFacts>();
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const ROUTES = new Set(["/v1/chat/completions", "/v1/models", "/health", "/ready", "/metrics", "/openapi.json"]);

/**
 * Runs `callback` when the response closes. Every part that cares (the log, the lifecycle, the
 * concurrency cap, the client-gone signal, the stream writer) shares the one 'close' listener
 * `observeRequest` adds, which keeps what an open stream holds small.
 */
export function whenClosed(response: ServerResponse, callback: () => void): void {
  const known = facts.get(response);
  if (known) (known.onClose ??= []).push(callback);
  else response.once("close", callback);
}

/** The facts of the request a response answers (set by `observeRequest`). */
export function factsOf(response: ServerResponse): RequestFacts {
  let known = facts.get(response);
  if (!known) {
    known = { requestId: randomUUID() };
    facts.set(response, known);
  }
  return known;
}

/**
 * Starts observing a request: a request id (the client's `X-Request-Id` when it is safe, else a new
 * one) echoed in the response, `nosniff`, and when the response closes one log line and its
 * metrics: id, route, workspace, mode, query ids, status, latency. Never headers or message content,
 * so no credential or prompt reaches the logs.
 */
export function observeRequest(
  request: IncomingMessage,
  response: ServerResponse,
  logger: Logger,
  metrics: Metrics,
): RequestFacts {
  const started = performance.now();
  const incoming = request.headers["x-request-id"];
  const known: RequestFacts = { requestId: typeof incoming === "string" && REQUEST_ID.test(incoming) ? incoming : randomUUID() };
  facts.set(response, known);
  response.setHeader("x-request-id", known.requestId);
  response.setHeader("x-content-type-options", "nosniff");
  response.once("close", () => {
    for (const callback of known.onClose ?? []) callback();
    const ms = performance.now() - started;
    const path = pathOf(request.url);
    const labels = { route: routeOf(path), mode: known.mode ?? "", status: String(response.statusCode) };
    metrics.requests.inc(labels);
    metrics.requestSeconds.observe(labels, ms / 1000);
    logger.info(
      {
        requestId: known.requestId,
        method: request.method,
        path,
        status: response.statusCode,
        workspace: known.workspace,
        mode: known.mode,
        queryIds: known.queryIds,
        continued: known.continued,
        completed: response.writableFinished,
        ms: Math.round(ms * 10) / 10,
      },
      "request",
    );
  });
  return known;
}

/** The path of a request URL, without its query string. */
export function pathOf(url: string | undefined): string {
  const path = url ?? "/";
  const query = path.indexOf("?");
  return query < 0 ? path : path.slice(0, query);
}

/** The route of a path, for metric labels: a fixed set, so that random paths cannot grow the label space. */
function routeOf(path: string): string {
  if (ROUTES.has(path)) return path;
  return path.startsWith("/v1/models/") ? "/v1/models/{id}" : "other";
}
