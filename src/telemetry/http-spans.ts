import type { IncomingMessage } from "node:http";
import type { Attributes, Span } from "@opentelemetry/api";
import type { CallTarget, CallUrl } from "./call-target.js";
import { ADAPTER, HTTP } from "./names.js";
import { KIND, STATUS_ERROR, traceparentOf, type Tracing } from "./tracing.js";

/**
 * The HTTP server span of a request (semantic conventions for HTTP servers): named by its method
 * until the route is known, continuing the caller's `traceparent`. Headers other than the
 * user agent are never recorded: they carry credentials.
 */
export function startRequestSpan(tracing: Tracing, request: IncomingMessage, path: string, requestId: string): Span {
  return tracing.startServerSpan(request, () => {
    const attributes: Attributes = { [HTTP.requestMethod]: request.method ?? "_OTHER", [HTTP.urlPath]: path, [HTTP.urlScheme]: "http" };
    const userAgent = request.headers["user-agent"];
    if (userAgent) attributes[HTTP.userAgent] = userAgent;
    attributes[ADAPTER.requestId] = requestId;
    return attributes;
  });
}

/** Ends a request's server span once its response closed: `{method} {route}`, the status, and a 5xx as an error. */
export function endRequestSpan(span: Span, method: string | undefined, route: string | undefined, status: number): void {
  if (route !== undefined) {
    span.updateName(`${method ?? "_OTHER"} ${route}`);
    span.setAttribute(HTTP.route, route);
  }
  span.setAttribute(HTTP.statusCode, status);
  if (status >= 500) {
    span.setAttribute(HTTP.errorType, String(status));
    span.setStatus({ code: STATUS_ERROR });
  }
  span.end();
}

/** One attempt of an upstream call, as tracing sees it: the headers that carry its context (none untraced), and its end. */
export interface CallAttempt {
  readonly headers: Readonly<Record<string, string>> | undefined;
  /** The attempt's status, or the error that ended it. */
  end(outcome: { status: number } | { error: unknown }): void;
}

const UNTRACED_ATTEMPT: CallAttempt = { headers: undefined, end: () => undefined };

/**
 * An attempt of a call to the workspace service at `path` (with its query string) on `target`,
 * made within the span the adapter's context names (`Tracing.parentSpan`: an answer's, a poll's):
 * a client span (semantic conventions for HTTP clients: `{method} {path}` without the query
 * string, a retry counted in `http.request.resend_count`) whose context goes along as
 * `traceparent`. Outside any span, or with tracing off (`NOOP_TRACING` names none), nothing
 * (`path` is not even built); a span the sampler drops builds no attributes.
 */
export function traceAttempt(
  tracing: Tracing,
  method: string,
  target: CallTarget,
  path: () => string,
  attempt: number,
): CallAttempt {
  const parent = tracing.parentSpan();
  if (!parent) return UNTRACED_ATTEMPT;
  const span = startUpstreamSpan(tracing, parent, method, target.url(path()), attempt);
  return { headers: traceHeaders(span), end: (outcome) => endUpstreamSpan(span, outcome) };
}

function startUpstreamSpan(tracing: Tracing, parent: Span, method: string, url: CallUrl, attempt: number): Span {
  const attributes = (): Attributes => {
    const own: Attributes = {
      [HTTP.requestMethod]: method,
      [HTTP.urlFull]: url.full,
      [HTTP.serverAddress]: url.hostname,
      [HTTP.serverPort]: url.port,
    };
    if (attempt > 0) own[HTTP.resendCount] = attempt;
    return own;
  };
  return tracing.startSpan(`${method} ${url.pathname}`, { kind: KIND.client, attributes }, parent);
}

/** Ends an upstream call's span with its status, or with the error that ended it (its code, else its class). */
function endUpstreamSpan(span: Span, outcome: { status: number } | { error: unknown }): void {
  if ("status" in outcome) {
    span.setAttribute(HTTP.statusCode, outcome.status);
    if (outcome.status >= 400) {
      span.setAttribute(HTTP.errorType, String(outcome.status));
      span.setStatus({ code: STATUS_ERROR });
    }
  } else {
    const error = outcome.error as { code?: unknown; name?: unknown; message?: unknown } | null;
    const type = typeof error?.code === "string" ? error.code : typeof error?.name === "string" ? error.name : "error";
    span.setAttribute(HTTP.errorType, type);
    span.setStatus({ code: STATUS_ERROR, ...(typeof error?.message === "string" ? { message: error.message } : {}) });
  }
  span.end();
}

/** The W3C trace context headers of a call made within `span`: `traceparent`, and `tracestate` when there is one. */
function traceHeaders(span: Span): Record<string, string> {
  const state = span.spanContext().traceState?.serialize();
  return state ? { traceparent: traceparentOf(span), tracestate: state } : { traceparent: traceparentOf(span) };
}
