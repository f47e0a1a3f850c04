import type { Link, Span } from "@opentelemetry/api";
import type { AnswerTrace } from "./answer-trace.js";
import { ADAPTER, HTTP, SPAN } from "./names.js";
import { KIND, NOOP_TRACING, STATUS_ERROR, traceparentOf, type Tracing } from "./tracing.js";

/**
 * How a shared poller is traced (docs/observability.md): each list round a short trace of its own
 * (not one request's work), linked to the answers it polls for, its list calls its children; what
 * another replica's poll fed this one a span in that poll's trace. The poller holds one whatever
 * the settings: `pollTracer(NOOP_TRACING)` does nothing, so the poller never asks whether it traces.
 */
export interface PollTracer {
  /** Starts a round, linked to the answers waiting (asked for only when a span is made). */
  startRound(workspace: string, waiting: () => Iterable<AnswerTrace>, othersWaiting: number): PollRound;
  /** What another replica's poll found for the answers waiting here (in that poll's trace, when it sent one). */
  receivedShared(traceparent: string | undefined, workspace: string, waiting: () => Iterable<AnswerTrace>, items: number): void;
  /** Runs `work` (a poll's timer) outside the context of the request that set it: its calls and log lines are no request's. */
  detached<T>(work: () => T): T;
}

/** One list round of a poller, as tracing sees it. */
export interface PollRound {
  /** Runs the round's list calls under its span (their parent, and their log lines'). */
  run<T>(work: () => Promise<T>): Promise<T>;
  /** The round's W3C `traceparent`, sent to other replicas with what it found (none when untraced). */
  readonly traceparent: string | undefined;
  /** Ends the round: pages listed, queries found, and the error that ended it if any. */
  end(pages: number, found: number, error?: unknown): void;
}

const UNTRACED_ROUND: PollRound = { run: (work) => work(), traceparent: undefined, end: () => undefined };

const UNTRACED_POLLS: PollTracer = {
  startRound: () => UNTRACED_ROUND,
  receivedShared: () => undefined,
  detached: (work) => work(),
};

/**
 * The tracer of a poller: spans on `tracing`; with tracing off (`NOOP_TRACING`) one that does
 * nothing, not even ask which answers wait.
 */
export function pollTracer(tracing: Tracing): PollTracer {
  if (tracing === NOOP_TRACING) return UNTRACED_POLLS;
  return {
    startRound(workspace, waiting, othersWaiting) {
      const served = spansOf(waiting());
      const attributes = {
        [ADAPTER.workspace]: workspace,
        [ADAPTER.pollWaiting]: served.length,
        [ADAPTER.pollOthersWaiting]: othersWaiting,
      };
      const span = tracing.startSpan(SPAN.poll, { kind: KIND.internal, attributes, links: linksTo(served) });
      return {
        run: (work) => tracing.withSpan(span, work),
        traceparent: traceparentOf(span),
        end: (pages, found, error) => endPollSpan(span, pages, found, error),
      };
    },
    receivedShared(traceparent, workspace, waiting, items) {
      if (traceparent === undefined) return;
      const served = spansOf(waiting());
      tracing
        .startSpan(
          SPAN.sharedPoll,
          {
            kind: KIND.consumer,
            attributes: { [ADAPTER.workspace]: workspace, [ADAPTER.pollWaiting]: served.length, [ADAPTER.pollFound]: items },
            links: linksTo(served),
          },
          traceparent,
        )
        .end();
    },
    detached: (work) => tracing.detached(work),
  };
}

function endPollSpan(span: Span, pages: number, found: number, error?: unknown): void {
  span.setAttributes({ [ADAPTER.pollPages]: pages, [ADAPTER.pollFound]: found });
  if (error !== undefined) {
    span.setAttribute(HTTP.errorType, (error as { name?: string } | null)?.name ?? "error");
    span.setStatus({ code: STATUS_ERROR });
  }
  span.end();
}

/** The spans of the traced answers among `traces`. */
function spansOf(traces: Iterable<AnswerTrace>): Span[] {
  const spans: Span[] = [];
  for (const trace of traces) trace.linkInto(spans);
  return spans;
}

function linksTo(spans: readonly Span[]): Link[] {
  return spans.map((span) => ({ context: span.spanContext() }));
}
