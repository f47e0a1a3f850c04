import type { Logger } from "pino";
import type { Metrics } from "../metrics/metrics.js";
import { logFieldsOf, type Tracing } from "../telemetry/tracing.js";
import { pathOf, RequestContexts, type RequestSubscriber } from "./request-contexts.js";

/** Counts every request and its latency, by route template, mode and status (docs/observability.md). */
export function requestMetrics(metrics: Metrics): RequestSubscriber {
  return ({ context, response, seconds }) => {
    const { route, mode } = context.facts;
    const labels = { route, mode: mode ?? "", status: String(response.statusCode) };
    metrics.requests.inc(labels);
    metrics.requestSeconds.observe(labels, seconds);
  };
}

/** Ends a traced request's answer span and server span, with its route and status. */
export const endRequestSpans: RequestSubscriber = ({ context, request, response }) => {
  const { span } = context;
  if (!span) return;
  context.answer?.end(response.writableFinished);
  span.end(request.method, context.facts.route === "other" ? undefined : context.facts.route, response.statusCode);
};

/**
 * One log line per request: id, route, who asked (a key's name or identity, never a key), workspace,
 * mode, query ids (or the chat UI housekeeping answered instead), status, latency, trace and span ids. Never headers or message content, so no
 * credential or prompt reaches the logs.
 */
export function requestLog(logger: Logger): RequestSubscriber {
  return ({ context, request, response, seconds }) => {
    const { account, workspace, mode, queryIds, continued, tool, chatUiTask } = context.facts;
    const fields = {
      requestId: context.id,
      method: request.method,
      path: pathOf(request.url),
      status: response.statusCode,
      key: account,
      workspace,
      mode,
      queryIds,
      continued,
      tool,
      chatUiTask,
      completed: response.writableFinished,
      ms: Math.round(seconds * 10_000) / 10,
    };
    logger.info(context.span ? Object.assign(fields, logFieldsOf(context.span.span)) : fields, "request");
  };
}

/**
 * The adapter's observed requests: each one's context, read when it closes by the metrics, the
 * span's end (when traced), the log line and the audit trail (with `AUDIT_LOG`: its answers are then followed for it).
 */
export function observeRequests(logger: Logger, metrics: Metrics, tracing?: Tracing, audit?: RequestSubscriber): RequestContexts {
  const subscribers = [requestMetrics(metrics), ...(tracing ? [endRequestSpans] : []), requestLog(logger)];
  if (audit) subscribers.push(audit);
  return new RequestContexts(subscribers, tracing, audit !== undefined);
}
