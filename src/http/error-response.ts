import type { ErrorRequestHandler, RequestHandler, Response } from "express";
import type { Logger } from "pino";
import {
  type AdapterError,
  NotFoundError,
  PayloadTooLargeError,
  RequestValidationError,
  toAdapterError,
  UnsupportedMediaTypeError,
} from "../errors/adapter-error.js";
import type { ErrorBody } from "../openai/chat-completion.js";

/**
 * The body of an error: the interface's `detail` (§ Errors) beside an OpenAI-style `error`
 * object, which OpenAI SDKs read (without it they print "status code (no body)").
 */
export function errorBody(error: AdapterError): ErrorBody {
  return {
    detail: error.detail,
    error: { message: error.message, type: error.type, param: error.param, code: error.code },
  };
}

/** Writes an error response: status, headers, body. The one place errors become HTTP. */
export function sendError(response: Response, error: AdapterError): void {
  response.status(error.status);
  for (const [name, value] of Object.entries(error.headers)) response.setHeader(name, value);
  if (error.status === 401) response.setHeader("www-authenticate", "Bearer");
  // Errors a retry cannot fix must not start duplicate queries through the SDKs' automatic retries.
  if (!error.retryable && error.status !== 500) response.setHeader("x-should-retry", "false");
  response.json(errorBody(error));
}

/** Translates body-parser failures (bad JSON, too large, bad charset) into adapter errors. */
function fromBodyParser(error: unknown): AdapterError | null {
  const parserError = error as { type?: string; limit?: number; message?: string; body?: string } | null;
  switch (parserError?.type) {
    case "entity.parse.failed": {
      // Where the JSON broke, as FastAPI reports it; the end of the body when it ended too soon.
      const position = /position (\d+)/.exec(parserError.message ?? "")?.[1];
      const where = position === undefined ? (parserError.body?.length ?? 0) : Number(position);
      return new RequestValidationError([
        {
          loc: ["body", where],
          msg: "JSON decode error",
          type: "json_invalid",
          input: {},
          ctx: { error: (parserError.message ?? "Invalid JSON").replace(/\s*\(.*$/s, "") },
        },
      ]);
    }
    case "entity.too.large":
      return new PayloadTooLargeError(parserError.limit ?? 0);
    case "charset.unsupported":
    case "encoding.unsupported":
      return new UnsupportedMediaTypeError(parserError.message);
    default:
      return null;
  }
}

/** The error middleware: every thrown error ends here; a 5xx never shows its internals. */
export function errorMiddleware(logger: Logger): ErrorRequestHandler {
  return (error, _request, response, _next) => {
    const adapterError = fromBodyParser(error) ?? toAdapterError(error);
    if (adapterError.status >= 500) {
      logger.error({ err: error, requestId: response.locals.requestId }, "request failed");
    }
    if (response.headersSent) {
      response.destroy();
      return;
    }
    sendError(response, adapterError);
  };
}

/** Unknown paths: a 404 in the same body shape as every other error. */
export const notFoundHandler: RequestHandler = (request) => {
  throw new NotFoundError(`No route for ${request.method} ${request.path}`);
};
