import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { Metrics } from "../metrics/metrics.js";

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
  /** Run when the response closes (one listener per response instead of one per interested part). */
  onClose?: (() => void)[];
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The facts of every response one adapter is answering, and its one 'close' listener per
 * response. Owned by the adapter (`createAdapter`), so two adapters in one process share nothing.
 */
export class ResponseFacts {
  private readonly facts = new WeakMap<ServerResponse, RequestFacts>();

  constructor(
    private readonly logger: Logger,
    private readonly metrics: Metrics,
  ) {}

  /**
   * Runs `callback` when the response closes. Every part that cares (the log, the lifecycle, the
   * concurrency cap, the client-gone signal, the stream writer) shares the one 'close' listener
   * `observe` adds, which keeps what an open stream holds small.
   */
  whenClosed(response: ServerResponse, callback: () => void): void {
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
   * Starts observing a request: a request id (the client's `X-Request-Id` when it is safe, else a
   * new one) echoed in the response, `nosniff`, and when the response closes one log line and its
   * metrics: id, route, workspace, mode, query ids, status, latency. Never headers or message
   * content, so no credential or prompt reaches the logs.
   */
  observe(request: IncomingMessage, response: ServerResponse): RequestFacts {
    const started = performance.now();
    const incoming = request.headers["x-request-id"];
    const known: RequestFacts = {
      requestId: typeof incoming === "string" && REQUEST_ID.test(incoming) ? incoming : randomUUID(),
      route: "other",
    };
    this.facts.set(response, known);
    response.setHeader("x-request-id", known.requestId);
    response.setHeader("x-content-type-options", "nosniff");
    response.once("close", () => {
      for (const callback of known.onClose ?? []) callback();
      const ms = performance.now() - started;
      const labels = { route: known.route, mode: known.mode ?? "", status: String(response.statusCode) };
      this.metrics.requests.inc(labels);
      this.metrics.requestSeconds.observe(labels, ms / 1000);
      this.logger.info(
        {
          requestId: known.requestId,
          method: request.method,
          path: pathOf(request.url),
          status: response.statusCode,
          workspace: known.workspace,
          mode: known.mode,
          queryIds: known.queryIds,
          continued: known.continued,
          tool: known.tool,
          completed: response.writableFinished,
          ms: Math.round(ms * 10) / 10,
        },
        "request",
      );
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
