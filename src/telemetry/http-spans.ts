import type { IncomingMessage } from "node:http";
import type { Span } from "@opentelemetry/api";
import type { CallTarget, CallUrl } from "./call-target.js";
import { ADAPTER, HTTP } from "./names.js";
import { factsOf, withFacts } from "./recorded-span.js";
import { factKey, type FactWriter, type SpanFacts } from "./span-facts.js";
import { KIND, type SpanStart, STATUS_ERROR, traceparentOf, type Tracing } from "./tracing.js";

const METHOD = factKey(HTTP.requestMethod);
const URL_PATH = factKey(HTTP.urlPath);
const URL_SCHEME = factKey(HTTP.urlScheme);
const USER_AGENT = factKey(HTTP.userAgent);
const REQUEST_ID = factKey(ADAPTER.requestId);
const ROUTE = factKey(HTTP.route);
const STATUS = factKey(HTTP.statusCode);
const ERROR_TYPE = factKey(HTTP.errorType);
const URL_FULL = factKey(HTTP.urlFull);
const SERVER_ADDRESS = factKey(HTTP.serverAddress);
const SERVER_PORT = factKey(HTTP.serverPort);
const RESEND_COUNT = factKey(HTTP.resendCount);

/** A request's server span's facts: what the request said, then its route and status once it closed. */
class ServerFacts implements SpanFacts {
  route: string | undefined = undefined;
  status: number | undefined = undefined;
  errorType: string | undefined = undefined;

  constructor(
    private readonly method: string,
    private readonly path: string,
    private readonly userAgent: string | undefined,
    private readonly requestId: string,
  ) {}

  write(out: FactWriter): void {
    out.fact(METHOD, this.method);
    out.fact(URL_PATH, this.path);
    out.fact(URL_SCHEME, "http");
    out.fact(USER_AGENT, this.userAgent);
    out.fact(REQUEST_ID, this.requestId);
    out.fact(ROUTE, this.route);
    out.fact(STATUS, this.status);
    out.fact(ERROR_TYPE, this.errorType);
  }
}

/**
 * The HTTP server span of a request (semantic conventions for HTTP servers): named by its method
 * until the route is known, continuing the caller's `traceparent`. Headers other than the
 * user agent are never recorded: they carry credentials.
 */
export function startRequestSpan(tracing: Tracing, request: IncomingMessage, path: string, requestId: string): Span {
  const span = tracing.startServerSpan(request);
  if (span.isRecording()) withFacts(span, new ServerFacts(request.method ?? "_OTHER", path, request.headers["user-agent"] || undefined, requestId));
  return span;
}

/** Ends a request's server span once its response closed: `{method} {route}`, the status, and a 5xx as an error. */
export function endRequestSpan(span: Span, method: string | undefined, route: string | undefined, status: number): void {
  const facts = factsOf(span, ServerFacts);
  if (route !== undefined) span.updateName(`${method ?? "_OTHER"} ${route}`);
  if (facts) {
    facts.route = route;
    facts.status = status;
    if (status >= 500) facts.errorType = String(status);
  }
  if (status >= 500) span.setStatus({ code: STATUS_ERROR });
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
  const url = target.url(path());
  const span = tracing.startSpan(`${method} ${url.pathname}`, CLIENT, parent);
  return new TracedAttempt(span, method, url, attempt);
}

/** How an upstream call's span starts: its attributes are facts (`withFacts`). */
const CLIENT: SpanStart = { kind: KIND.client };

/** An upstream call's span's facts: where it went, then its status or the error that ended it. */
class ClientFacts implements SpanFacts {
  status: number | undefined = undefined;
  errorType: string | undefined = undefined;

  constructor(
    private readonly method: string,
    private readonly url: CallUrl,
    private readonly attempt: number,
  ) {}

  write(out: FactWriter): void {
    out.fact(METHOD, this.method);
    out.fact(URL_FULL, this.url.full);
    out.fact(SERVER_ADDRESS, this.url.hostname);
    out.fact(SERVER_PORT, this.url.port);
    if (this.attempt > 0) out.fact(RESEND_COUNT, this.attempt);
    out.fact(STATUS, this.status);
    out.fact(ERROR_TYPE, this.errorType);
  }
}

/** A traced attempt: its span, and the span's facts when it records. */
class TracedAttempt implements CallAttempt {
  readonly headers: Readonly<Record<string, string>>;
  private readonly facts: ClientFacts | undefined;

  constructor(
    private readonly span: Span,
    method: string,
    url: CallUrl,
    attempt: number,
  ) {
    this.headers = traceHeaders(span);
    this.facts = span.isRecording() ? withFacts(span, new ClientFacts(method, url, attempt)) : undefined;
  }

  /** Ends the span with the attempt's status, or with the error that ended it (its code, else its class). */
  end(outcome: { status: number } | { error: unknown }): void {
    const { span, facts } = this;
    if ("status" in outcome) {
      if (facts) {
        facts.status = outcome.status;
        if (outcome.status >= 400) facts.errorType = String(outcome.status);
      }
      if (outcome.status >= 400) span.setStatus({ code: STATUS_ERROR });
    } else {
      const error = outcome.error as { code?: unknown; name?: unknown; message?: unknown } | null;
      if (facts) facts.errorType = typeof error?.code === "string" ? error.code : typeof error?.name === "string" ? error.name : "error";
      span.setStatus({ code: STATUS_ERROR, ...(typeof error?.message === "string" ? { message: error.message } : {}) });
    }
    span.end();
  }
}

/** The W3C trace context headers of a call made within `span`: `traceparent`, and `tracestate` when there is one. */
function traceHeaders(span: Span): Record<string, string> {
  const state = span.spanContext().traceState?.serialize();
  return state ? { traceparent: traceparentOf(span), tracestate: state } : { traceparent: traceparentOf(span) };
}
