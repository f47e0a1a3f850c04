import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Span } from "@opentelemetry/api";
import type { Logger } from "pino";
import type { Metrics } from "../metrics/metrics.js";
import { type AnswerStart, type AnswerTrace, SpanAnswerTrace, UNTRACED_ANSWER } from "../telemetry/answer-trace.js";
import { endRequestSpan, startRequestSpan } from "../telemetry/http-spans.js";
import { logFieldsOf, type Tracing } from "../telemetry/tracing.js";

/** What a request's handling learnt that its log line and metrics report. */
export interface RequestFacts {
  requestId: string;
  /** The route template it matched (a metric label: a fixed set), or `other`. */
  route: string;
  workspace?: string;
  mode?: string;
  queryIds?: string[];
  continued?: boolean;
  /** The MCP tool a request called. */
  tool?: string;
  /** The chat UI's housekeeping a request asked for, answered by the adapter (`open-webui/title`). */
  chatUiTask?: string;
  /** Run when the response closes (one listener per response instead of one per interested part). */
  onClose?: (() => void)[];
  /** The request's server span, when tracing is on (docs/observability.md). */
  span?: Span;
  /** The span of the answer it produces, once admitted (`traceAnswer`). */
  answer?: AnswerTrace;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A request's handling once it is observed: what `ResponseFacts.handle` runs. */
export type RequestHandler = (request: IncomingMessage, response: ServerResponse, known: RequestFacts) => void;

/**
 * The facts of every response one adapter is answering, and its one 'close' listener per
 * response. Owned by the adapter (`createAdapter`), so two adapters in one process share nothing.
 */
export class ResponseFacts {
  private readonly facts = new WeakMap<ServerResponse, RequestFacts>();

  constructor(
    private readonly logger: Logger,
    private readonly metrics: Metrics,
    /** Traces every request (a server span) and its answer, when tracing is on. */
    private readonly tracing?: Tracing,
  ) {}

  /**
   * Runs `callback` when the response closes. Every part that cares (the log, the lifecycle, the
   * concurrency cap, the client-gone signal, the stream writer) shares the one 'close' listener
   * `observe` adds, which keeps what an open stream holds small. On a response already closed,
   * `callback` runs at once.
   */
  whenClosed(response: ServerResponse, callback: () => void): void {
    // A response that closed while its handler awaited (a client gone during admission) runs it now.
    if (response.closed) {
      callback();
      return;
    }
    const known = this.facts.get(response);
    if (known) (known.onClose ??= []).push(callback);
    else response.once("close", callback);
  }

  /** The facts of the request a response answers (set by `observe`). */
  of(response: ServerResponse): RequestFacts {
    let known = this.facts.get(response);
    if (!known) {
      known = { requestId: randomUUID(), route: "other" };
      this.facts.set(response, known);
    }
    return known;
  }

  /**
   * Starts the span of an admitted request's answer (`chat {model}`, `execute_tool {name}`) under
   * its server span; `UNTRACED_ANSWER` when tracing is off. Ends when the response closes. The
   * runner calls it once per answer and hands the trace to the answer service (`AnswerJob.trace`).
   */
  traceAnswer(response: ServerResponse, start: AnswerStart): AnswerTrace {
    const known = this.facts.get(response);
    if (!this.tracing || !known?.span) return UNTRACED_ANSWER;
    known.answer = new SpanAnswerTrace(this.tracing, known.span, start);
    return known.answer;
  }

  /**
   * Handles a request, with its server span as the span of its log lines when traced (the
   * request and response go as arguments: an untraced request costs no closure).
   */
  handle(known: RequestFacts, request: IncomingMessage, response: ServerResponse, handler: RequestHandler): void {
    const { span } = known;
    if (this.tracing && span) this.tracing.withLogSpan(span, () => handler(request, response, known));
    else handler(request, response, known);
  }

  /**
   * Starts observing a request: a request id (the client's `X-Request-Id` when it is safe, else a
   * new one) echoed in the response, `nosniff`, the server span when tracing is on, and when the
   * response closes one log line and its metrics: id, route, workspace, mode, query ids (or the chat
   * UI housekeeping answered instead), status,
   * latency, trace and span ids. Never headers or message content, so no credential or prompt
   * reaches the logs.
   */
  observe(request: IncomingMessage, response: ServerResponse): RequestFacts {
    const started = performance.now();
    const incoming = request.headers["x-request-id"];
    const known: RequestFacts = {
      requestId: typeof incoming === "string" && REQUEST_ID.test(incoming) ? incoming : randomUUID(),
      route: "other",
    };
    this.facts.set(response, known);
    if (this.tracing) known.span = startRequestSpan(this.tracing, request, pathOf(request.url), known.requestId);
    response.setHeader("x-request-id", known.requestId);
    response.setHeader("x-content-type-options", "nosniff");
    response.once("close", () => {
      for (const callback of known.onClose ?? []) callback();
      const ms = performance.now() - started;
      const labels = { route: known.route, mode: known.mode ?? "", status: String(response.statusCode) };
      this.metrics.requests.inc(labels);
      this.metrics.requestSeconds.observe(labels, ms / 1000);
      if (known.span) {
        known.answer?.end(response.writableFinished);
        endRequestSpan(known.span, request.method, known.route === "other" ? undefined : known.route, response.statusCode);
      }
      const fields = {
          requestId: known.requestId,
          method: request.method,
          path: pathOf(request.url),
          status: response.statusCode,
          workspace: known.workspace,
          mode: known.mode,
          queryIds: known.queryIds,
          continued: known.continued,
          tool: known.tool,
          chatUiTask: known.chatUiTask,
          completed: response.writableFinished,
          ms: Math.round(ms * 10) / 10,
      };
      this.logger.info(known.span ? { ...fields, ...logFieldsOf(known.span) } : fields, "request");
    });
    return known;
  }
}

/** The path of a request URL, without its query string. */
export function pathOf(url: string | undefined): string {
  const path = url ?? "/";
  const query = path.indexOf("?");
  return query < 0 ? path : path.slice(0, query);
}
