import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { FrameSink } from "../answer/frame-sink.js";
import type { RunningAnswer } from "../answer/running-answer.js";
import { type AnswerSeen, observeAnswer } from "../audit/observed-answer.js";
import { ClientClosedError } from "../errors/adapter-error.js";
import type { AnswerStart } from "../telemetry/answer-facts.js";
import { type AnswerTrace, SpanAnswerTrace, UNTRACED_ANSWER } from "../telemetry/answer-trace.js";
import { RequestSpan } from "../telemetry/http-spans.js";
import type { Tracing } from "../telemetry/tracing.js";

/** What a request's handling learnt that its log line and metrics report (docs/observability.md). */
export interface RequestFacts {
  /** The route template it matched (a metric label: a fixed set), or `other`. */
  route: string;
  /** Who asked (`Account.id`: a key's name, a gateway identity; never a key), once admitted. */
  account: string | undefined;
  workspace: string | undefined;
  mode: string | undefined;
  queryIds: string[] | undefined;
  continued: boolean | undefined;
  /** The MCP tool a request called. */
  tool: string | undefined;
  /** The chat UI's housekeeping a request asked for, answered by the adapter (`open-webui/title`). */
  chatUiTask: string | undefined;
}

/** What every request context of one adapter shares: its tracing, and whether its answers are audited. */
export interface Observing {
  /** Traces every request (a server span) and its answer, when tracing is on. */
  readonly tracing?: Tracing | undefined;
  /** Whether answers are audited (`AUDIT_LOG`): each is then followed for its record, and its usage counted. */
  readonly audited: boolean;
}

/** What a request's end runs: told whether its response was written whole (false: the client left first). */
export type CloseHook = (completed: boolean) => void;

/**
 * One request as the edge observes it, passed explicitly to whatever serves it (the route, admission,
 * the runner, a delivery): its id, what its handling learnt (set through the typed setters below,
 * each by the part that learns it), its spans when traced, the answer the audit trail follows, and
 * what runs when it ends. The edge makes one per HTTP request (`RequestContexts.open`); a request
 * with no HTTP response (a message on a socket, a test) gets one from `RequestContexts.detached`.
 * The log line, metrics and span end read it as it closes (`RequestContexts`' subscribers).
 */
export class RequestContext {
  private readonly known: RequestFacts = {
    route: "other",
    account: undefined,
    workspace: undefined,
    mode: undefined,
    queryIds: undefined,
    continued: undefined,
    tool: undefined,
    chatUiTask: undefined,
  };
  private closeHooks: CloseHook[] | undefined;
  /** Once it has ended: whether its response was written whole. */
  private outcome: boolean | undefined;
  /** The span of the answer it produces, once admitted (`traceAnswer`). */
  private answerTrace: AnswerTrace | undefined;
  /** What the audit trail saw of its answer (`follow`), when answers are audited. */
  private answerSeen: AnswerSeen | undefined;
  /** The stream its response is, once one is open: where a failure after the headers goes (`reportFailure`). */
  private openStream: FrameSink | undefined;

  constructor(
    /** The request id: the client's `X-Request-Id` when it is safe, else a new one. */
    readonly id: string,
    /** The request's server span, when tracing is on (docs/observability.md). */
    readonly span: RequestSpan | undefined,
    private readonly observing: Observing,
    /** Its HTTP response's last bytes, for what is freed as they are written (`whenFinishing`); none without a response. */
    private readonly finishing?: Pick<ServerResponse, "once">,
  ) {}

  /** What the handling learnt so far. */
  get facts(): Readonly<RequestFacts> {
    return this.known;
  }

  /** The answer's span, once there is one. */
  get answer(): AnswerTrace | undefined {
    return this.answerTrace;
  }

  /** What the audit trail saw of the answer, when answers are audited. */
  get seen(): AnswerSeen | undefined {
    return this.answerSeen;
  }

  /** Whether its answers are audited (`AUDIT_LOG`): the runner then counts their usage. */
  get audited(): boolean {
    return this.observing.audited;
  }

  /** The stream its response is, while one is open (a failure after the headers ends it with the dialect's error frames). */
  get stream(): FrameSink | undefined {
    return this.openStream;
  }

  /** Whether the request has ended (its response closed). */
  get closed(): boolean {
    return this.outcome !== undefined;
  }

  /** Admission settled who asks (docs/governance.md#who-asks). */
  identified(account: string): void {
    this.known.account = account;
  }

  /** The route table matched the request to `route` (its template). */
  matched(route: string): void {
    this.known.route = route;
  }

  /** The request was found to be for `workspace` (MCP, before it knows whether a tool asks it). */
  inWorkspace(workspace: string): void {
    this.known.workspace = workspace;
  }

  /** The runner planned the request's answer: its workspace, mode and queries, and whether it continues one. */
  answering(answer: { workspace: string; mode: string; queryIds: string[]; continued: boolean }): void {
    this.known.workspace = answer.workspace;
    this.known.mode = answer.mode;
    this.known.queryIds = answer.queryIds;
    this.known.continued = answer.continued;
  }

  /** The adapter answers a chat UI's housekeeping itself (docs/chat-ui-tasks.md): no query. */
  answeredLocally(task: { workspace: string; mode: string; chatUiTask: string }): void {
    this.known.workspace = task.workspace;
    this.known.mode = task.mode;
    this.known.chatUiTask = task.chatUiTask;
  }

  /** An MCP request called `tool`. */
  callingTool(tool: string): void {
    this.known.tool = tool;
  }

  /** Its response became a stream (the SSE writer opened it). */
  streaming(stream: FrameSink): void {
    this.openStream = stream;
  }

  /**
   * Runs `hook` when the request ends (its response closes), told whether the response was written
   * whole; at once on one that has ended. Every part that cares shares the one 'close' listener
   * `RequestContexts.open` adds, which keeps what an open stream holds small.
   */
  whenClosed(hook: CloseHook): void {
    if (this.outcome !== undefined) hook(this.outcome);
    else (this.closeHooks ??= []).push(hook);
  }

  /** Runs `hook` as the response's last bytes are written (`prefinish`), before its close; without a response, nothing (its end is that moment). */
  whenFinishing(hook: () => void): void {
    this.finishing?.once("prefinish", hook);
  }

  /** @internal The request ended (its response closed): its hooks run, once, in the order they were added. */
  close(completed: boolean): void {
    if (this.outcome !== undefined) return;
    this.outcome = completed;
    const hooks = this.closeHooks;
    this.closeHooks = undefined;
    for (const hook of hooks ?? []) hook(completed);
  }

  /**
   * Starts the span of an admitted request's answer (`chat {model}`, `execute_tool {name}`) under
   * the request's server span; `UNTRACED_ANSWER` when tracing is off. It ends when the request ends.
   * The runner calls it once per answer and hands the trace to the answer service (`AnswerJob.trace`).
   */
  traceAnswer(start: AnswerStart): AnswerTrace {
    const { tracing } = this.observing;
    if (!tracing || !this.span) return UNTRACED_ANSWER;
    const answer = new SpanAnswerTrace(tracing, this.span.span, start);
    this.answerTrace = answer;
    return answer;
  }

  /** The answer, followed on the side for the audit trail when answers are audited (docs/governance.md#the-audit-trail); else itself. */
  follow(answer: RunningAnswer, prompt: string): RunningAnswer {
    if (!this.observing.audited) return answer;
    const observed = observeAnswer(answer, prompt);
    this.answerSeen = observed.seen;
    return observed.answer;
  }

  /**
   * The request's one AbortController for its answer: it aborts when the client goes away before
   * the response is complete, with the client's leaving as its reason (`ClientClosedError`), so that
   * whatever it stops (an upstream call, a wait) ends in the 499 the edge drops, never in a 500
   * logged as a failure. The answer service aborts it too when the queries need no more following.
   */
  abortWhenLeft(): AbortController {
    const controller = new AbortController();
    this.whenClosed((completed) => {
      if (!completed) controller.abort(new ClientClosedError());
    });
    return controller;
  }
}

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
      context.close(response.writableFinished || upgraded);
      const closed = { context, request, response, seconds: (performance.now() - started) / 1000 };
      for (const subscriber of this.subscribers) subscriber(closed);
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
      if (context.closed) return;
      context.close(completed);
      const response = { statusCode: status, writableFinished: completed };
      const closed = { context, request, response, seconds: (performance.now() - started) / 1000 };
      for (const subscriber of this.subscribers) subscriber(closed);
    };
    return { context, end };
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
