import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RunningAnswer } from "../answer/running-answer.js";
import { type AnswerSeen, observeAnswer } from "../audit/observed-answer.js";
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

/**
 * One request as the edge observes it: its id, what its handling learnt (set through the typed
 * setters below, each by the part that learns it), its spans when traced, and what runs when its
 * response closes. The log line, metrics and span end read it then (`RequestContexts`' subscribers).
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
  private closeHooks: (() => void)[] | undefined;
  /** The span of the answer it produces, once admitted (`RequestContexts.traceAnswer`). */
  private answerTrace: AnswerTrace | undefined;
  /** What the audit trail saw of its answer (`RequestContexts.follow`), when answers are audited. */
  private answerSeen: AnswerSeen | undefined;

  constructor(
    /** The request id: the client's `X-Request-Id` when it is safe, else a new one. */
    readonly id: string,
    /** The request's server span, when tracing is on (docs/observability.md). */
    readonly span: RequestSpan | undefined,
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

  /** The answer's span starts (`RequestContexts.traceAnswer`). */
  traced(answer: AnswerTrace): void {
    this.answerTrace = answer;
  }

  /** The audit trail follows the answer (`RequestContexts.follow`). */
  followed(seen: AnswerSeen): void {
    this.answerSeen = seen;
  }

  /** Runs `hook` when the response closes (before the subscribers read the context). */
  onClose(hook: () => void): void {
    (this.closeHooks ??= []).push(hook);
  }

  /** @internal The response closed: its hooks run, in the order they were added. */
  runCloseHooks(): void {
    for (const hook of this.closeHooks ?? []) hook();
  }
}

/** A request whose response has closed, as the subscribers read it. */
export interface ClosedRequest {
  context: RequestContext;
  request: IncomingMessage;
  response: ServerResponse;
  /** From the request's arrival to its close. */
  seconds: number;
}

/** Reads every request when its response closes: the log line, the metrics, the span's end (request-log.ts). */
export type RequestSubscriber = (closed: ClosedRequest) => void;

/** A request's handling once it is observed: what `RequestContexts.handle` runs. */
export type RequestHandler = (request: IncomingMessage, response: ServerResponse, context: RequestContext) => void;

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Where a response carries its context: a property of the response, not a `WeakMap` entry. V8's
 * minor GC keeps the value of every entry of an old `WeakMap` alive, and a context reaches its
 * response (its close hooks hold it), so the response kept its own key alive: every request's
 * objects outlived two minor GCs and were promoted to the old generation, and the minor GCs
 * copying them cost a tenth of a chat completion's CPU (docs/benchmarks.md#what-shaped-these-numbers).
 */
const CONTEXT = Symbol("requestContext");
type WithContext = ServerResponse & { [CONTEXT]?: RequestContext };

/**
 * The context of every response one adapter is answering, its one 'close' listener per response,
 * and the subscribers that read each request as it closes. Owned by the adapter (`createAdapter`),
 * so two adapters in one process share nothing.
 */
export class RequestContexts {
  constructor(
    /** Read each request as its response closes, in order. */
    private readonly subscribers: readonly RequestSubscriber[],
    /** Traces every request (a server span) and its answer, when tracing is on. */
    private readonly tracing?: Tracing,
    /** Whether answers are audited (`AUDIT_LOG`): each is then followed for its record, and its usage counted. */
    readonly audited = false,
  ) {}

  /**
   * Starts observing a request: its context (a request id echoed in the response), `nosniff`, the
   * server span when tracing is on, and, when the response closes, the context's hooks and then
   * the subscribers.
   */
  open(request: IncomingMessage, response: ServerResponse): RequestContext {
    const started = performance.now();
    const incoming = request.headers["x-request-id"];
    const id = typeof incoming === "string" && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    const span = this.tracing ? RequestSpan.start(this.tracing, request, pathOf(request.url), id) : undefined;
    const context = new RequestContext(id, span);
    (response as WithContext)[CONTEXT] = context;
    response.setHeader("x-request-id", id);
    response.setHeader("x-content-type-options", "nosniff");
    response.once("close", () => {
      // A client gone before the response began is logged and counted as 499, as nginx does (`ClientClosedError`).
      if (!response.headersSent && !response.writableFinished) response.statusCode = 499;
      context.runCloseHooks();
      const closed = { context, request, response, seconds: (performance.now() - started) / 1000 };
      for (const subscriber of this.subscribers) subscriber(closed);
    });
    return context;
  }

  /** The context of the request a response answers (set by `open`; a new one for a response never opened). */
  of(response: ServerResponse): RequestContext {
    let context = contextOf(response);
    if (!context) {
      context = new RequestContext(randomUUID(), undefined);
      (response as WithContext)[CONTEXT] = context;
    }
    return context;
  }

  /** Admission settled who asks (docs/governance.md#who-asks): told to the request's context (every handled request has one). */
  identified(response: ServerResponse, account: string): void {
    contextOf(response)?.identified(account);
  }

  /**
   * Runs `callback` when the response closes. Every part that cares (the lifecycle, the
   * concurrency cap, the client-gone signal, the stream writer) shares the one 'close' listener
   * `open` adds, which keeps what an open stream holds small. On a response already closed,
   * `callback` runs at once.
   */
  whenClosed(response: ServerResponse, callback: () => void): void {
    // A response that closed while its handler awaited (a client gone during admission) runs it now.
    if (response.closed) {
      callback();
      return;
    }
    const context = contextOf(response);
    if (context) context.onClose(callback);
    else response.once("close", callback);
  }

  /**
   * Starts the span of an admitted request's answer (`chat {model}`, `execute_tool {name}`) under
   * its server span; `UNTRACED_ANSWER` when tracing is off. Ends when the response closes. The
   * runner calls it once per answer and hands the trace to the answer service (`AnswerJob.trace`).
   */
  traceAnswer(response: ServerResponse, start: AnswerStart): AnswerTrace {
    const context = contextOf(response);
    if (!this.tracing || !context?.span) return UNTRACED_ANSWER;
    const answer = new SpanAnswerTrace(this.tracing, context.span.span, start);
    context.traced(answer);
    return answer;
  }

  /**
   * The answer a request's runner delivers, followed for the audit trail when answers are audited
   * (docs/governance.md#the-audit-trail): the same events and usage, seen on the side. Unaudited,
   * the answer itself: nothing is added to the serving loop.
   */
  follow(response: ServerResponse, answer: RunningAnswer, prompt: string): RunningAnswer {
    if (!this.audited) return answer;
    const observed = observeAnswer(answer, prompt);
    this.of(response).followed(observed.seen);
    return observed.answer;
  }

  /**
   * Handles a request, in its server span's context when traced: the span of its log lines and the
   * parent of what it calls (the request and response go as arguments: an untraced request costs no closure).
   */
  handle(context: RequestContext, request: IncomingMessage, response: ServerResponse, handler: RequestHandler): void {
    const { span } = context;
    if (this.tracing && span) this.tracing.within(span.context, () => handler(request, response, context));
    else handler(request, response, context);
  }
}

/** The path of a request URL, without its query string. */
export function pathOf(url: string | undefined): string {
  const path = url ?? "/";
  const query = path.indexOf("?");
  return query < 0 ? path : path.slice(0, query);
}

function contextOf(response: ServerResponse): RequestContext | undefined {
  return (response as WithContext)[CONTEXT];
}
