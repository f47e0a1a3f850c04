import type { ServerResponse } from "node:http";
import type { FrameSink } from "../answer/frame-sink.js";
import type { RunningAnswer } from "../answer/running-answer.js";
import { type AnswerSeen, observeAnswer } from "../audit/observed-answer.js";
import { ClientClosedError } from "../errors/adapter-error.js";
import type { AnswerStart } from "../telemetry/answer-facts.js";
import { type AnswerTrace, SpanAnswerTrace, UNTRACED_ANSWER } from "../telemetry/answer-trace.js";
import type { RequestSpan } from "../telemetry/http-spans.js";
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
    // Under a request span the sampler dropped, the answer's would be dropped too: the request's stays
    // active, and its context (trace id, "not sampled") is what the upstream calls carry.
    if (tracing.dropsWholeTraces && !this.span.span.isRecording()) return UNTRACED_ANSWER;
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
