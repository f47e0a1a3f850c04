/**
 * The adapter's one error hierarchy. Every failure a client can see is one of these; the
 * HTTP edge (`http/error-response.ts`) maps them to a status and a body in one place, and
 * the stream writer maps them to an SSE error event.
 */

/** One FastAPI-style validation problem, as the interface's 422 body lists them (docs/architecture/upstream.md#errors). */
export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
  input?: unknown;
  ctx?: Record<string, unknown>;
}

/** What an error needs to become an HTTP response; subclasses only fix the defaults. */
export interface AdapterErrorOptions {
  /** Interface `detail`: a message, or the 422 list of issues. */
  detail?: string | ValidationIssue[];
  /** OpenAI `error.param`: the request parameter at fault, when there is one. */
  param?: string | null;
  /** OpenAI `error.code`: a stable machine-readable code. */
  code?: string | null;
  /** Extra response headers (`Retry-After`, …). */
  headers?: Record<string, string>;
  /** Whether the same request may succeed when sent again (drives `x-should-retry`). */
  retryable?: boolean;
  cause?: unknown;
}

/** Base of every error the adapter reports to a client. */
export class AdapterError extends Error {
  readonly status: number;
  /** OpenAI `error.type`. */
  readonly type: string;
  readonly detail: string | ValidationIssue[];
  readonly param: string | null;
  readonly code: string | null;
  readonly headers: Record<string, string>;
  readonly retryable: boolean;

  constructor(status: number, type: string, message: string, options: AdapterErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.status = status;
    this.type = type;
    this.detail = options.detail ?? message;
    this.param = options.param ?? null;
    this.code = options.code ?? null;
    this.headers = options.headers ?? {};
    this.retryable = options.retryable ?? false;
  }
}

/** 401: no bearer credential, or one the upstream (or the deployment) does not accept. */
export class AuthenticationError extends AdapterError {
  constructor(message = "Not authenticated", options: AdapterErrorOptions = {}) {
    super(401, "authentication_error", message, { code: "invalid_api_key", ...options });
  }
}

/** 403: the upstream refused the credential for this workspace. */
export class PermissionDeniedError extends AdapterError {
  constructor(message: string, options: AdapterErrorOptions = {}) {
    super(403, "permission_error", message, options);
  }
}

/**
 * 421: the request names a host this adapter does not answer to (a `Host` outside loopback,
 * `PUBLIC_URL`'s and `ALLOWED_HOSTS`): what a DNS-rebinding page sends (docs/operating.md#a-local-workspace-stays-local).
 */
export class MisdirectedRequestError extends AdapterError {
  constructor(message: string, options: AdapterErrorOptions = {}) {
    super(421, "invalid_request_error", message, { code: "host_not_allowed", ...options });
  }
}

/** 404: a resource (a model, a query of another workspace) that is not there for this caller. */
export class NotFoundError extends AdapterError {
  constructor(message: string, options: AdapterErrorOptions = {}) {
    super(404, "not_found_error", message, options);
  }
}

/** 422: the request does not match the interface; `issues` is the FastAPI-style list. */
export class RequestValidationError extends AdapterError {
  readonly issues: ValidationIssue[];
  constructor(issues: ValidationIssue[], options: AdapterErrorOptions = {}) {
    super(422, "invalid_request_error", summarizeIssues(issues), {
      detail: issues,
      param: paramOf(issues[0]),
      code: issues[0]?.type ?? null,
      ...options,
    });
    this.issues = issues;
  }
}

/**
 * 400: the request asks for something the workspace cannot do — JSON that follows a schema, a
 * forced tool call (docs/architecture/dialects.md#honest-capabilities). OpenAI's status and shape for an
 * unsupported parameter value; not a 422, since the request is valid, only unanswerable as asked.
 */
export class UnsupportedParameterError extends AdapterError {
  constructor(message: string, param: string) {
    super(400, "invalid_request_error", message, { param, code: "unsupported_value" });
  }
}

/**
 * 400: the workspace's answer did not match the caller's schema, after the repair turn too
 * (docs/structured-answers.md#failure-modes). OpenAI's `invalid_request_error` naming the parameter
 * that asked (`response_format`, `text.format`, `tool_choice`), code `structured_output_failed`.
 * A status no client retries by default, since each try asks the workspace twice more: not a 5xx
 * (every SDK retries those), and not a 422, which LangChain JS retries up to six times (its
 * `AsyncCaller` spares only 400–407, 409 and 413, and reads no `x-should-retry`).
 */
export class StructuredOutputError extends AdapterError {
  constructor(message: string, param: string) {
    super(400, "invalid_request_error", message, { param, code: "structured_output_failed" });
  }
}

/**
 * 400: a valid request the API cannot carry out as asked (docs/responses-api.md#background-mode):
 * `background` without `store`, cancelling a response that finished, resuming a stream past its end,
 * `conversation` beside `previous_response_id`. OpenAI's status and shape; `param` names the field.
 */
export class InvalidRequestError extends AdapterError {
  constructor(message: string, options: AdapterErrorOptions = {}) {
    super(400, "invalid_request_error", message, options);
  }
}

/** 405: a known path asked with a method it does not answer; `Allow` lists the ones it does. */
export class MethodNotAllowedError extends AdapterError {
  constructor(method: string, path: string, allowed: readonly string[]) {
    super(405, "invalid_request_error", `${method} is not allowed on ${path}; use ${allowed.join(" or ")}`, {
      code: "method_not_allowed",
      headers: { allow: allowed.join(", ") },
    });
  }
}

/** 413: the request body is larger than the configured limit. */
export class PayloadTooLargeError extends AdapterError {
  constructor(limitBytes: number) {
    super(413, "invalid_request_error", `Request body is larger than the limit of ${limitBytes} bytes`, {
      code: "payload_too_large",
    });
  }
}

/** 415: the body is not declared as JSON. */
export class UnsupportedMediaTypeError extends AdapterError {
  constructor(contentType: string | undefined) {
    super(
      415,
      "invalid_request_error",
      `Content-Type must be application/json (got ${contentType ? JSON.stringify(contentType) : "none"})`,
      { code: "unsupported_media_type" },
    );
  }
}

/** 429: too many requests, here or upstream. */
export class RateLimitError extends AdapterError {
  constructor(message: string, options: AdapterErrorOptions = {}) {
    super(429, "rate_limit_error", message, { code: "rate_limit_exceeded", retryable: true, ...options });
  }
}

/** 502: the upstream failed, answered something unusable, or could not be reached. */
export class UpstreamError extends AdapterError {
  constructor(message: string, options: AdapterErrorOptions = {}) {
    super(502, "upstream_error", message, { code: "upstream_error", retryable: true, ...options });
  }
}

/** 502: the workspace finished the query as FAILED; retrying would start another query. */
export class QueryFailedError extends AdapterError {
  constructor(message: string, options: AdapterErrorOptions = {}) {
    super(502, "query_failed", message, { code: "query_failed", retryable: false, ...options });
  }
}

/** 504: the query did not finish before its mode's deadline, or the upstream did not answer in time. */
export class GatewayTimeoutError extends AdapterError {
  constructor(message: string, options: AdapterErrorOptions = {}) {
    super(504, "timeout_error", message, { code: "timeout", retryable: false, ...options });
  }
}

/** 503: the adapter is shutting down or not ready. */
export class ServiceUnavailableError extends AdapterError {
  constructor(message: string, options: AdapterErrorOptions = {}) {
    super(503, "service_unavailable", message, { code: "service_unavailable", retryable: true, ...options });
  }
}

/**
 * 503: the request continues a conversation (a conversation id, a history with an earlier answer,
 * a stored response) that the shared store cannot look up now. Refused, never answered as a new
 * conversation, which would lose its context (docs/architecture/redis.md#redis-down-or-slow).
 */
export class ContinuationUnavailableError extends ServiceUnavailableError {
  constructor(what: string, code: string, cause: unknown) {
    super(
      `${what} cannot be looked up now: the shared store does not answer. ` +
        "The request was not answered as a new conversation, which would lose its context; send it again shortly.",
      { code, headers: { "retry-after": "1" }, cause },
    );
  }
}

/** 499 (as nginx logs it): the client went away before the answer; nothing is sent. */
export class ClientClosedError extends AdapterError {
  constructor() {
    super(499, "client_closed_request", "The client closed the connection before the answer was ready");
  }
}

/** 500: anything unexpected. Its message is never sent to the client. */
export class InternalError extends AdapterError {
  constructor(cause: unknown) {
    super(500, "server_error", "Internal server error", { code: "internal_error", cause });
  }
}

/** The request parameter an issue points at, in OpenAI's dotted form (`messages.0.content`). */
function paramOf(issue: ValidationIssue | undefined): string | null {
  if (!issue) return null;
  const [where, ...path] = issue.loc;
  if (where !== "body") return typeof where === "string" && path.length > 0 ? String(path[0]) : null;
  return path.length > 0 ? path.join(".") : null;
}

/** One readable sentence for the OpenAI `error.message` of a 422. */
function summarizeIssues(issues: ValidationIssue[]): string {
  const parts = issues.slice(0, 3).map((issue) => `${issue.loc.join(".")}: ${issue.msg}`);
  const more = issues.length > 3 ? ` (and ${issues.length - 3} more)` : "";
  return `Invalid request: ${parts.join("; ")}${more}`;
}

/** Wraps whatever was thrown so that the edge always has an `AdapterError` to map. */
export function toAdapterError(error: unknown): AdapterError {
  return error instanceof AdapterError ? error : new InternalError(error);
}
