import type { ServerResponse } from "node:http";
import type { Logger } from "pino";
import { type AdapterError, ClientClosedError, RequestValidationError, toAdapterError } from "../errors/adapter-error.js";
import { errorBody } from "../errors/error-body.js";
import { utf8Of } from "../util/utf8.js";
import type { RequestContext } from "./request-context.js";

/** Writes an error response: status, headers, body. The one place errors become HTTP. */
export function sendError(response: ServerResponse, error: AdapterError): void {
  response.statusCode = error.status;
  for (const [name, value] of Object.entries(error.headers)) response.setHeader(name, value);
  if (error.status === 401 && !response.hasHeader("www-authenticate")) response.setHeader("www-authenticate", "Bearer");
  // Errors a retry cannot fix must not start duplicate queries through the SDKs' automatic retries.
  if (!error.retryable && error.status !== 500) response.setHeader("x-should-retry", "false");
  sendJson(response, errorBody(error));
}

/**
 * Writes a problem with an MCP request's body (too large, not JSON, too deep, empty) as the
 * JSON-RPC error MCP clients read (docs/architecture.md#mcp-tools): no `id` (none could be read),
 * `-32700` when the JSON does not parse, `-32600` otherwise; 400 where the other routes say 422.
 * The interface's `detail` rides along in `data`.
 */
export function sendJsonRpcError(response: ServerResponse, error: AdapterError, id: string | number | null = null): void {
  const unparsable = error instanceof RequestValidationError && error.issues[0]?.type === "json_invalid";
  response.statusCode = error.status === 422 ? 400 : error.status;
  for (const [name, value] of Object.entries(error.headers)) response.setHeader(name, value);
  sendJson(response, {
    jsonrpc: "2.0",
    id,
    error: {
      code: unparsable ? -32700 : -32600,
      message: error.message,
      data: { type: error.type, code: error.code, detail: error.detail },
    },
  });
}

/** Writes a JSON body with its length (and a status, when it is not the response's already). */
export function sendJson(response: ServerResponse, body: unknown, status?: number): void {
  if (status !== undefined) response.statusCode = status;
  response.setHeader("content-type", "application/json; charset=utf-8");
  endWithText(response, JSON.stringify(body));
}

/**
 * Ends a response with `text` as its body, encoded to UTF-8 once (`utf8Of`): its length is the buffer's, and
 * Node writes the head and the buffer together, where a string body is measured, then joined to
 * the head and encoded again (an answer with one non-Latin-1 character makes that join a two-byte
 * string twice the body's size; docs/benchmarks.md#what-shaped-these-numbers).
 */
export function endWithText(response: ServerResponse, text: string): void {
  endWithBytes(response, utf8Of(text));
}

/** Ends a response with `bytes` as its body, its length said: one write of head and body. */
export function endWithBytes(response: ServerResponse, bytes: Buffer): void {
  response.setHeader("content-length", bytes.length);
  response.end(bytes);
}

/** A final JSON body no cache may keep (an answer, a background response's object). */
export function sendUncached(response: ServerResponse, body: unknown): void {
  response.setHeader("cache-control", "no-store");
  sendJson(response, body);
}

/** Where a failure is reported: the response, and the request's context (its answer's span, its open stream). */
export interface FailureTarget {
  response: ServerResponse;
  context: RequestContext;
}

/**
 * The one error path of every route (docs/architecture/edge.md#the-route-table): whatever a handler
 * throws or rejects with becomes an `AdapterError` (`toAdapterError`), told to the answer's span,
 * and answered as HTTP while nothing was sent (`sendError`: status, headers, the error body).
 * After the headers, a stream ends with its dialect's error frames (an `error` event, then `[DONE]`
 * for chat), and any other response is cut. A client that left gets nothing; a 5xx is logged and
 * never shows its internals.
 */
export function reportFailure(error: unknown, target: FailureTarget, logger: Logger): void {
  const { response, context } = target;
  const failure = toAdapterError(error);
  if (failure instanceof ClientClosedError && response.destroyed) return;
  context.answer?.fail(failure);
  if (failure.status >= 500) logger.error({ err: error, requestId: context.id }, "request failed");
  if (!response.headersSent) {
    sendError(response, failure);
    return;
  }
  const stream = context.stream;
  if (stream && !stream.isClosed) void stream.fail(failure);
  else response.destroy();
}
