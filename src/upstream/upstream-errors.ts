import { errors as undiciErrors } from "undici";
import {
  type AdapterError,
  AuthenticationError,
  GatewayTimeoutError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  RequestValidationError,
  UpstreamError,
  type ValidationIssue,
} from "../errors/adapter-error.js";
import { upstreamErrorSchema } from "./query-schemas.js";

/** A non-2xx answer as read once for the table: its status, its `detail`, and the call it answered. */
interface Refusal {
  status: number;
  /** The upstream's `detail`, or the status alone when the body says nothing readable. */
  message: string;
  /** A 422's issue list, when the upstream gave one. */
  issues: ValidationIssue[] | undefined;
  retryAfter: string | undefined;
  /** The call it answered (`POST /queries`). */
  what: string;
}

const timedOut = ({ status, what }: Refusal) => new GatewayTimeoutError(`The workspace service timed out (${status}) on ${what}`, { retryable: true });

/**
 * Each upstream status the interface names, and the error of the adapter's hierarchy it becomes
 * (docs/upstream-assumptions.md#upstream-errors): the one table, as openai-node's `APIError.generate`.
 * Any other status is a 502 naming the call, retryable when it was a 5xx.
 */
const BY_STATUS: Readonly<Record<number, (refusal: Refusal) => AdapterError>> = {
  401: ({ message }) => new AuthenticationError(message),
  403: ({ message }) => new PermissionDeniedError(message),
  404: ({ message }) => new NotFoundError(message),
  408: timedOut,
  422: ({ issues, message }) => new RequestValidationError(issues ?? [{ loc: ["body"], msg: message, type: "value_error" }]),
  429: ({ message, retryAfter }) => new RateLimitError(message, { headers: retryAfter === undefined ? {} : { "retry-after": retryAfter } }),
  504: timedOut,
};

/** Maps a non-2xx upstream answer through the table (docs/upstream-assumptions.md#upstream-errors). */
export function statusError(
  status: number,
  text: string,
  headers: Record<string, string | string[] | undefined>,
  what: string,
): AdapterError {
  const detail = detailOf(text);
  const retryAfter = headers["retry-after"];
  const refusal: Refusal = {
    status,
    message: typeof detail === "string" ? detail : `The workspace service answered ${status} to ${what}`,
    issues: Array.isArray(detail) ? detail : undefined,
    retryAfter: typeof retryAfter === "string" ? retryAfter : undefined,
    what,
  };
  const mapped = BY_STATUS[status];
  if (mapped) return mapped(refusal);
  return new UpstreamError(`The workspace service answered ${status} to ${what}`, { retryable: status >= 500 });
}

/** The `detail` of an upstream error body: a message or an issue list; undefined when the body is not one. */
function detailOf(text: string): string | ValidationIssue[] | undefined {
  try {
    const parsed = upstreamErrorSchema.safeParse(JSON.parse(text));
    return parsed.success ? (parsed.data.detail as string | ValidationIssue[]) : undefined;
  } catch {
    // Not JSON: the status alone speaks.
    return undefined;
  }
}

/**
 * Maps a failed exchange: an error of the adapter's own as it is (a body over the size bound), the
 * caller's abort as its reason, a timeout to 504, anything else to 502 with its code.
 */
export function transportError(error: unknown, what: string, signal: AbortSignal | undefined): unknown {
  if (error instanceof UpstreamError) return error;
  if (signal?.aborted) return signal.reason ?? error;
  if (
    error instanceof undiciErrors.HeadersTimeoutError ||
    error instanceof undiciErrors.BodyTimeoutError ||
    error instanceof undiciErrors.ConnectTimeoutError
  ) {
    return new GatewayTimeoutError(`The workspace service did not answer ${what} in time`, {
      retryable: true,
    });
  }
  const code = (error as { code?: string } | null)?.code;
  return new UpstreamError(`Could not reach the workspace service for ${what}${code ? ` (${code})` : ""}`, {
    cause: error,
  });
}
