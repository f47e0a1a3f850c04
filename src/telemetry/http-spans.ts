import type { IncomingMessage } from "node:http";
import type { Context, Span } from "@opentelemetry/api";
import type { CallTarget, CallUrl } from "./call-target.js";
import { ADAPTER, HTTP } from "./names.js";
import { endWithFacts, type FactWriter, type SpanFacts } from "./span-facts.js";
import { KIND, type SpanStart, STATUS_ERROR, type Tracing } from "./tracing.js";

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
    out.fact(HTTP.requestMethod, this.method);
    out.fact(HTTP.urlPath, this.path);
    out.fact(HTTP.urlScheme, "http");
    out.fact(HTTP.userAgent, this.userAgent);
    out.fact(ADAPTER.requestId, this.requestId);
    out.fact(HTTP.route, this.route);
    out.fact(HTTP.statusCode, this.status);
    out.fact(HTTP.errorType, this.errorType);
  }
}

/**
 * The HTTP server span of a request (semantic conventions for HTTP servers), named by its method
 * until the route is known, and the context its handling runs in. Headers other than the user
 * agent are never recorded: they carry credentials.
 */
export class RequestSpan {
  private constructor(
    readonly span: Span,
    /** The context the request is handled in: its span, over what the caller propagated. */
    readonly context: Context,
    private readonly facts: ServerFacts | undefined,
  ) {}

  /** Starts the server span of `request` (its path without the query string, and its id). */
  static start(tracing: Tracing, request: IncomingMessage, path: string, requestId: string): RequestSpan {
    const { span, context } = tracing.startServerSpan(request);
    const facts = span.isRecording() ? new ServerFacts(request.method ?? "_OTHER", path, request.headers["user-agent"] || undefined, requestId) : undefined;
    return new RequestSpan(span, context, facts);
  }

  /** Ends the span once the response closed: `{method} {route}`, the status, and a 5xx as an error. */
  end(method: string | undefined, route: string | undefined, status: number): void {
    const { span, facts } = this;
    // A span the sampler dropped records nothing: no name to build, no status to set.
    if (!facts) {
      span.end();
      return;
    }
    if (route !== undefined) span.updateName(`${method ?? "_OTHER"} ${route}`);
    facts.route = route;
    facts.status = status;
    if (status >= 500) facts.errorType = String(status);
    if (status >= 500) span.setStatus({ code: STATUS_ERROR });
    endWithFacts(span, facts);
  }
}

/** One attempt of an upstream call, as tracing sees it: the headers that carry its context (none untraced), where it runs, and its end. */
export interface CallAttempt {
  readonly headers: Readonly<Record<string, string>> | undefined;
  /** Runs the attempt with its span active (an instrumented HTTP client's own span then nests under it). */
  run<T>(work: () => T): T;
  /** The attempt's status, or the error that ended it. */
  end(outcome: { status: number } | { error: unknown }): void;
}

const UNTRACED_ATTEMPT: CallAttempt = { headers: undefined, run: (work) => work(), end: () => undefined };

/**
 * An attempt of a call to the workspace service at `path` (with its query string) on `target`,
 * made within the active span (an answer's, a poll's, a request's): a client span (semantic
 * conventions for HTTP clients: `{method} {path}` without the query string, a retry counted in
 * `http.request.resend_count`) whose context goes along in the headers the propagators write.
 * Outside any span, or with tracing off (`NOOP_TRACING` names none), nothing (`path` is not even
 * built); a span the sampler drops builds no facts.
 */
export function traceAttempt(
  tracing: Tracing,
  method: string,
  target: CallTarget,
  path: () => string,
  attempt: number,
): CallAttempt {
  const parent = tracing.activeSpan();
  if (!parent) return UNTRACED_ATTEMPT;
  // Under a span the sampler dropped (parent-based sampling drops its children too), the call takes
  // no span of its own: the parent's context goes along, so the trace id and the "not sampled" flag
  // still reach the workspace service, and nothing is built for a span nobody records.
  if (!parent.isRecording()) return new PropagatedAttempt(tracing.headersOf(parent));
  const url = target.url(path());
  const span = tracing.startSpan(`${method} ${url.pathname}`, CLIENT, parent);
  return new TracedAttempt(tracing, span, method, url, attempt);
}

/** An attempt under a span that records nothing: only its context is sent along. */
class PropagatedAttempt implements CallAttempt {
  constructor(readonly headers: Readonly<Record<string, string>>) {}

  run<T>(work: () => T): T {
    return work();
  }

  end(): void {}
}

/** How an upstream call's span starts: its attributes are facts, written as it ends. */
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
    out.fact(HTTP.requestMethod, this.method);
    out.fact(HTTP.urlFull, this.url.full);
    out.fact(HTTP.serverAddress, this.url.hostname);
    out.fact(HTTP.serverPort, this.url.port);
    if (this.attempt > 0) out.fact(HTTP.resendCount, this.attempt);
    out.fact(HTTP.statusCode, this.status);
    out.fact(HTTP.errorType, this.errorType);
  }
}

/** A traced attempt: its span, and the span's facts when it records. */
class TracedAttempt implements CallAttempt {
  readonly headers: Readonly<Record<string, string>>;
  private readonly facts: ClientFacts | undefined;

  constructor(
    private readonly tracing: Tracing,
    private readonly span: Span,
    method: string,
    url: CallUrl,
    attempt: number,
  ) {
    this.headers = tracing.headersOf(span);
    this.facts = span.isRecording() ? new ClientFacts(method, url, attempt) : undefined;
  }

  run<T>(work: () => T): T {
    return this.tracing.withSpan(this.span, work);
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
    endWithFacts(span, facts);
  }
}
