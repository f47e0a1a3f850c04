import type { Request, Response } from "express";
import { RequestValidationError, UnsupportedMediaTypeError } from "../errors/adapter-error.js";

/**
 * The parsed JSON body. `express.json` leaves the body undefined when the content type is not
 * JSON: a request that has a body of another type gets 415, one with no body at all a 422.
 */
export function requireJsonBody(request: Request): unknown {
  if (request.body !== undefined) return request.body;
  const hasBody =
    Number(request.headers["content-length"] ?? 0) > 0 || request.headers["transfer-encoding"] !== undefined;
  if (hasBody) throw new UnsupportedMediaTypeError(request.headers["content-type"]);
  throw new RequestValidationError([{ loc: ["body"], msg: "Field required", type: "missing" }]);
}

/**
 * A signal that aborts when the client goes away before the response is complete. It listens
 * on the response: `req.on('close')` fires as soon as the request body has been read.
 */
export function abortWhenClientLeaves(response: Response): AbortSignal {
  const controller = new AbortController();
  response.once("close", () => {
    if (!response.writableFinished) controller.abort();
  });
  return controller.signal;
}
