import type { Link, Span } from "@opentelemetry/api";
import { ADAPTER, HTTP, SPAN } from "./names.js";
import { KIND, STATUS_ERROR, type Tracing } from "./tracing.js";

/**
 * A shared poller's list round: a short trace of its own (not one request's work), linked to the
 * answer spans of the requests it polls for; its list calls are its children.
 */
export function startPollSpan(tracing: Tracing, workspace: string, served: readonly Span[], othersWaiting: number): Span {
  const attributes = {
    [ADAPTER.workspace]: workspace,
    [ADAPTER.pollWaiting]: served.length,
    [ADAPTER.pollOthersWaiting]: othersWaiting,
  };
  return tracing.startSpan(SPAN.poll, { kind: KIND.internal, attributes, links: linksTo(served) });
}

/** Ends a poll's span: pages listed, queries found, and the error that ended it if any. */
export function endPollSpan(span: Span, pages: number, found: number, error?: unknown): void {
  span.setAttributes({ [ADAPTER.pollPages]: pages, [ADAPTER.pollFound]: found });
  if (error !== undefined) {
    span.setAttribute(HTTP.errorType, (error as { name?: string } | null)?.name ?? "error");
    span.setStatus({ code: STATUS_ERROR });
  }
  span.end();
}

/**
 * What this replica received from another replica's poll (the lease holder's): a short span in
 * that poll's trace, linked to the answer spans of the requests it fed.
 */
export function recordSharedPoll(
  tracing: Tracing,
  pollTraceparent: string,
  workspace: string,
  served: readonly Span[],
  items: number,
): void {
  tracing
    .startSpan(
      SPAN.sharedPoll,
      {
        kind: KIND.consumer,
        attributes: { [ADAPTER.workspace]: workspace, [ADAPTER.pollWaiting]: served.length, [ADAPTER.pollFound]: items },
        links: linksTo(served),
      },
      pollTraceparent,
    )
    .end();
}

function linksTo(spans: readonly Span[]): Link[] {
  return spans.map((span) => ({ context: span.spanContext() }));
}
