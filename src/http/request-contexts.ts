import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { RequestSpan } from "../telemetry/http-spans.js";
import type { Tracing } from "../telemetry/tracing.js";
import { type Observing, RequestContext } from "./request-context.js";

/** A request whose response has closed, as the subscribers read it. */
export interface ClosedRequest {
  context: RequestContext;
  /** The HTTP request; for a message on a WebSocket, its upgrade request. */
  request: IncomingMessage;
  /** How it ended: its HTTP response, or what a message on a WebSocket ended with (`RequestContexts.message`). */
  response: Pick<ServerResponse, "statusCode" | "writableFinished">;
  /** From the request's arrival to its close. */
  seconds: number;
}

/** Reads every request when its response closes: the log line, the metrics, the span's end (request-log.ts). */
export type RequestSubscriber = (closed: ClosedRequest) => void;

/** A request's handling once it is observed: what `RequestContexts.handle` runs. */
export type RequestHandler = (request: IncomingMessage, response: ServerResponse, context: RequestContext) => void;

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Makes the context of every request one adapter answers, adds its response's one 'close'
 * listener, and tells the subscribers of each request as it closes. Owned by the adapter
 * (`createAdapter`), so two adapters in one process share nothing.
 */
export class RequestContexts {
  private readonly observing: Observing;

  constructor(
    /** Read each request as its response closes, in order. */
    private readonly subscribers: readonly RequestSubscriber[],
    /** Traces every request (a server span) and its answer, when tracing is on. */
    tracing?: Tracing,
    /** Whether answers are audited (`AUDIT_LOG`): each is then followed for its record, and its usage counted. */
    readonly audited = false,
  ) {
    this.observing = { tracing, audited };
  }

  /**
   * Starts observing an HTTP request: its context (a request id echoed in the response),
   * `nosniff`, the server span when tracing is on, and, when the response closes, the context's
   * hooks and then the subscribers.
   */
  open(request: IncomingMessage, response: ServerResponse): RequestContext {
    const started = performance.now();
    const incoming = request.headers["x-request-id"];
    const id = typeof incoming === "string" && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    const { tracing } = this.observing;
    const span = tracing ? RequestSpan.start(tracing, request, pathOf(request.url), id) : undefined;
    const context = new RequestContext(id, span, this.observing, response);
    response.setHeader("x-request-id", id);
    response.setHeader("x-content-type-options", "nosniff");
    response.once("close", () => {
      // A client gone before the response began is logged and counted as 499, as nginx does (`ClientClosedError`);
      // a WebSocket's upgrade (101) ends whole when its socket closes, its answers told one by one (`message`).
      const upgraded = response.statusCode === 101;
      if (!response.headersSent && !response.writableFinished && !upgraded) response.statusCode = 499;
      this.closed(context, request, response, started, response.writableFinished || upgraded);
    });
    return context;
  }

  /**
   * The context of a request with no HTTP response (a message on a socket; a test): untraced, never
   * read by the subscribers, ended when its owner calls `close`.
   */
  detached(id: string = randomUUID()): RequestContext {
    return new RequestContext(id, undefined, this.observing);
  }

  /**
   * The context of one message on a WebSocket that asks for an answer (docs/responses-api.md#websocket-mode),
   * on the connection its upgrade `request` opened: traced like a request when tracing is on, and ended by its owner with the status
   * an HTTP request would have had and whether the answer went whole, which the subscribers (log
   * line, metrics, audit trail) then read as they read an HTTP request's end.
   */
  message(request: IncomingMessage, route: string): { context: RequestContext; end(status: number, completed: boolean): void } {
    const started = performance.now();
    const id = randomUUID();
    const { tracing } = this.observing;
    const span = tracing ? RequestSpan.start(tracing, request, pathOf(request.url), id) : undefined;
    const context = new RequestContext(id, span, this.observing);
    context.matched(route);
    const end = (status: number, completed: boolean) => {
      if (!context.closed) this.closed(context, request, { statusCode: status, writableFinished: completed }, started, completed);
    };
    return { context, end };
  }

  /** Ends a request's context (its hooks told whether it went whole), then tells the subscribers, in order. */
  private closed(context: RequestContext, request: IncomingMessage, response: ClosedRequest["response"], started: number, completed: boolean): void {
    context.close(completed);
    const closed = { context, request, response, seconds: (performance.now() - started) / 1000 };
    for (const subscriber of this.subscribers) subscriber(closed);
  }

  /**
   * Handles a request, in its server span's context when traced: the span of its log lines and the
   * parent of what it calls (the request and response go as arguments: an untraced request costs no closure).
   */
  handle(context: RequestContext, request: IncomingMessage, response: ServerResponse, handler: RequestHandler): void {
    const { span } = context;
    const { tracing } = this.observing;
    if (tracing && span) tracing.within(span.context, () => handler(request, response, context));
    else handler(request, response, context);
  }
}

/** The path of a request URL, without its query string. */
export function pathOf(url: string | undefined): string {
  const path = url ?? "/";
  const query = path.indexOf("?");
  return query < 0 ? path : path.slice(0, query);
}
