import type { IncomingMessage } from "node:http";
import {
  PayloadTooLargeError,
  RequestValidationError,
  UnsupportedMediaTypeError,
} from "../errors/adapter-error.js";
import { errorMessage } from "../util/error-message.js";

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * Reads and parses a JSON request body, with the errors of the interface: 415 when it is not
 * declared as JSON (or declares a charset other than UTF-8), 413 past `limitBytes` (before reading
 * when Content-Length says so), 422 `json_invalid` with the position, 422 `missing` when empty.
 * A lean reader: on the hot path, body-parser's generality (inflation, other charsets) costs more
 * than it gives here.
 */
export async function readJsonBody(request: IncomingMessage, limitBytes: number): Promise<unknown> {
  const declaredLength = Number(request.headers["content-length"] ?? Number.NaN);
  const hasBody = declaredLength > 0 || request.headers["transfer-encoding"] !== undefined;
  const type = request.headers["content-type"];
  if (hasBody && (!type || !JSON_TYPE.test(type))) throw new UnsupportedMediaTypeError(type);
  const charset = type ? /;\s*charset="?([^";]+)"?/i.exec(type)?.[1]?.toLowerCase() : undefined;
  if (charset && charset !== "utf-8" && charset !== "utf8") throw new UnsupportedMediaTypeError(type);
  if (declaredLength > limitBytes) {
    request.resume();
    throw new PayloadTooLargeError(limitBytes);
  }
  const text = await readText(request, limitBytes);
  if (text.trim() === "") throw new RequestValidationError([{ loc: ["body"], msg: "Field required", type: "missing" }]);
  try {
    return JSON.parse(text);
  } catch (error) {
    const message = errorMessage(error);
    // Where the JSON broke, as FastAPI reports it; the end of the body when it ended too soon.
    const position = /position (\d+)/.exec(message)?.[1];
    throw new RequestValidationError([
      {
        loc: ["body", position === undefined ? text.length : Number(position)],
        msg: "JSON decode error",
        type: "json_invalid",
        input: {},
        ctx: { error: message.replace(/\s*\(.*$/s, "") },
      },
    ]);
  }
}

/** The body as UTF-8 text, refusing it past `limitBytes` (events, not an async iterator: cheaper per request). */
function readText(request: IncomingMessage, limitBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) {
        request.off("data", onData);
        request.resume();
        reject(new PayloadTooLargeError(limitBytes));
        return;
      }
      chunks.push(chunk);
    };
    request.on("data", onData);
    request.once("end", () => resolve(chunks.length === 1 ? (chunks[0] as Buffer).toString("utf8") : Buffer.concat(chunks).toString("utf8")));
    request.once("error", reject);
  });
}
