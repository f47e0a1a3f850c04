import type { Span } from "@opentelemetry/api";
import type { QuerySnapshot } from "../core/query-snapshot.js";
import { AnswerFacts, type AnswerStart, type CountedUsage, dense } from "./answer-facts.js";
import { ADAPTER, EVENT, HTTP, SPAN } from "./names.js";
import { endWithFacts } from "./span-facts.js";
import { KIND, type SpanStart, STATUS_ERROR, type Tracing } from "./tracing.js";

/** What the client was sent of one choice (the encoder's `sent()`). */
interface SentChoice {
  content: string;
  reasoning: string;
}

/**
 * What the layers of an answer report to tracing (docs/observability.md), called at the points the
 * adapter already has: the runner starts it once a request is admitted, the answer core reports
 * the plan, each query created and each snapshot, the watcher's realtime channel its publications,
 * the delivery what was delivered and its usage, and the edge ends it when the response closes.
 * Never optional: with tracing off (or before a request has a span) it is `UNTRACED_ANSWER`, whose
 * methods do nothing, so no layer branches on whether it is traced.
 */
export interface AnswerTrace {
  /** Runs `work` (the answer's start) with the answer's span as the parent of the upstream calls it makes. */
  within<T>(work: () => T): T;
  /** Adds the answer's span to a poll's links (a poll serves the answers waiting on it). */
  linkInto(spans: Span[]): void;
  /** The answer core planned its queries: how many choices, whether it continues a query, and (opted in) the prompt. */
  planned(plan: { prompt: string; queries: readonly unknown[]; continued: boolean }): void;
  /** A choice's query exists upstream: the workspace query is the conversation. */
  created(choice: number, queryId: string): void;
  /** A snapshot of a choice's query reached the answer core. */
  snapshot(choice: number, snapshot: QuerySnapshot): void;
  /** A query's realtime channel starts being followed. */
  startRealtime(wsUrl: string): ChannelTrace;
  /** The id the client sees (`chatcmpl-…`, `resp_…`). */
  respondedAs(id: string): void;
  /**
   * The answer was delivered: what each choice sent and its usage — counted, being counted, or
   * (a function) to be counted only if the span is recorded (a streamed answer whose client did
   * not ask for usage is counted for a sampled span alone).
   */
  delivered(sent: readonly SentChoice[], usage: DeliveredUsage): void;
  /** The answer failed (a FAILED query, a deadline, an upstream error). */
  fail(error: Error): void;
  /** The response closed: whether the client got it all. */
  end(completed: boolean): void;
}

/** An answer's usage as its delivery knows it: counted, being counted, to be counted on asking, or unknown. */
export type DeliveredUsage = CountedUsage | Promise<CountedUsage> | (() => Promise<CountedUsage>) | undefined;

/** A query's realtime subscription as tracing sees it: its publications, and how it ended. */
export interface ChannelTrace {
  publication(): void;
  /** The subscription ended: `closed` (the watch is over), or the reason it was given up. */
  end(how: string): void;
}

const ignore = () => undefined;

/** A realtime subscription nothing records (an untraced answer's, or a channel not subscribed). */
export const UNTRACED_CHANNEL: ChannelTrace = { publication: ignore, end: ignore };

/** The trace of an answer nothing records (tracing off, an answer the adapter gives itself): every report costs a call that does nothing. */
export const UNTRACED_ANSWER: AnswerTrace = {
  within: (work) => work(),
  linkInto: ignore,
  planned: ignore,
  created: ignore,
  snapshot: ignore,
  startRealtime: () => UNTRACED_CHANNEL,
  respondedAs: ignore,
  delivered: ignore,
  fail: ignore,
  end: ignore,
};

/** How an answer's span starts: its attributes are facts, written as it ends. */
const ANSWER: SpanStart = { kind: KIND.internal };

/**
 * One answer's span — `chat {model}`, or `execute_tool {name}` — and everything recorded on it,
 * called at the points the adapter already has: the edge starts it once a request is admitted,
 * the answer core reports the plan, each query created and each snapshot (first step, first
 * text, terminal status become events), the watcher's realtime channel reports its first
 * publication, the writer reports what was delivered and its usage, and the edge ends it when
 * the response closes. Upstream calls made for the answer are its children. Its attributes are
 * facts (`span-facts.ts`), kept only for a span the sampler records and written onto it as it
 * ends. Message content goes on it only when the operator opted in (`Tracing.capturesContent`).
 */
export class SpanAnswerTrace implements AnswerTrace {
  readonly span: Span;
  /** The span's facts; none when the sampler dropped it. */
  private readonly facts: AnswerFacts | undefined;
  private sawStep = false;
  private sawText = false;
  private sawPublication = false;
  private readonly finishReasons: string[] = [];
  private pending: Promise<unknown> | undefined;
  private ended = false;

  constructor(
    private readonly tracing: Tracing,
    parent: Span,
    start: AnswerStart,
  ) {
    const name = start.operation === "execute_tool" ? `execute_tool ${start.tool ?? start.mode}` : `chat ${start.model}`;
    this.span = tracing.startSpan(name, ANSWER, parent);
    this.facts = this.span.isRecording() ? new AnswerFacts(start) : undefined;
  }

  within<T>(work: () => T): T {
    return this.tracing.withSpan(this.span, work);
  }

  linkInto(spans: Span[]): void {
    spans.push(this.span);
  }

  /** The answer core planned its queries: how many choices, whether it continues a query, and (opted in) the prompt. */
  planned(plan: { prompt: string; queries: readonly unknown[]; continued: boolean }): void {
    const { facts } = this;
    if (!facts) return;
    facts.choiceCount = plan.queries.length;
    facts.continued = plan.continued;
    if (this.tracing.capturesContent) {
      facts.inputMessages = JSON.stringify([{ role: "user", parts: [{ type: "text", content: plan.prompt }] }]);
    }
  }

  /** A choice's query exists upstream: the workspace query is the conversation. */
  created(choice: number, queryId: string): void {
    if (this.facts) this.facts.queryIds[choice] = queryId;
  }

  /** A snapshot of a choice's query reached the answer core: the first step, the first text and the end are events. */
  snapshot(choice: number, snapshot: QuerySnapshot): void {
    if (!this.facts) return;
    if (!this.sawStep && snapshot.steps.length > 0) {
      this.sawStep = true;
      this.span.addEvent(EVENT.firstStep, { [ADAPTER.choice]: choice });
    }
    if (!this.sawText && snapshot.output !== "" && snapshot.status !== "FAILED") {
      this.sawText = true;
      this.span.addEvent(EVENT.firstText, { [ADAPTER.choice]: choice });
    }
    if (snapshot.status === "PROCESSED" || snapshot.status === "FAILED") {
      this.finishReasons[choice] = snapshot.status === "PROCESSED" ? "stop" : "error";
      this.span.addEvent(EVENT.terminal, { [ADAPTER.choice]: choice, [ADAPTER.queryStatus]: snapshot.status });
    }
  }

  /** A query's realtime channel starts being followed: its span, under the answer's. */
  startRealtime(wsUrl: string): ChannelTrace {
    const url = new URL(wsUrl);
    const span = this.tracing.startSpan(
      SPAN.realtime,
      { kind: KIND.client, attributes: { [HTTP.serverAddress]: url.hostname, [HTTP.serverPort]: Number(url.port || (url.protocol === "wss:" ? 443 : 80)) } },
      this.span,
    );
    return new ChannelSpan(span, () => {
      if (this.sawPublication) return;
      this.sawPublication = true;
      this.span.addEvent(EVENT.firstPublication);
    });
  }

  /** The id the client sees (`chatcmpl-…`, `resp_…`). */
  respondedAs(id: string): void {
    if (this.facts) this.facts.responseId = id;
  }

  /**
   * The answer was delivered: what each choice sent (the output messages, opted in) and its
   * usage, counted or being counted (the span ends once the count is in); a span the sampler
   * dropped asks for nothing.
   */
  delivered(sent: readonly SentChoice[], usage: DeliveredUsage): void {
    const { facts } = this;
    if (!facts || !this.span.isRecording()) return;
    if (this.tracing.capturesContent) {
      const messages = sent.map((choice, index) => ({
        role: "assistant",
        parts: [...(choice.reasoning ? [{ type: "reasoning", content: choice.reasoning }] : []), { type: "text", content: choice.content }],
        finish_reason: this.finishReasons[index] ?? "stop",
      }));
      facts.outputMessages = JSON.stringify(messages);
    }
    if (usage === undefined) return;
    const counted = typeof usage === "function" ? usage() : usage;
    if (!(counted instanceof Promise)) {
      facts.usage = counted;
      return;
    }
    this.pending = counted.then(
      (known) => (facts.usage = known),
      () => undefined,
    );
  }

  /** The answer failed (a FAILED query, a deadline, an upstream error): `error.type` is the error's class. */
  fail(error: Error): void {
    if (this.ended) return;
    if (this.facts) this.facts.errorType = error.name;
    this.span.setStatus({ code: STATUS_ERROR, message: error.message });
  }

  /** The response closed: ends the span (once any usage being counted is in), saying whether the client got it all. */
  end(completed: boolean): void {
    if (this.ended) return;
    this.ended = true;
    const { facts } = this;
    if (!facts) {
      this.span.end();
      return;
    }
    const finishReasons = dense(this.finishReasons);
    if (finishReasons.length > 0) facts.finishReasons = finishReasons;
    facts.completed = completed;
    // A performance timestamp: the SDK places it on the span's own clock.
    const at = performance.now();
    if (this.pending) void this.pending.then(() => endWithFacts(this.span, facts, at));
    else endWithFacts(this.span, facts, at);
  }
}

/** A query's realtime subscription span: its publications counted, the first one an event on the answer. */
class ChannelSpan implements ChannelTrace {
  private publications = 0;
  private ended = false;

  constructor(
    private readonly span: Span,
    private readonly onFirst: () => void,
  ) {}

  publication(): void {
    if (this.publications === 0) this.onFirst();
    this.publications += 1;
  }

  end(how: string): void {
    if (this.ended) return;
    this.ended = true;
    this.span.setAttributes({ [ADAPTER.channelEnd]: how, [ADAPTER.channelPublications]: this.publications });
    if (how !== "closed") {
      this.span.setAttribute(HTTP.errorType, how);
      this.span.setStatus({ code: STATUS_ERROR, message: `realtime channel given up: ${how}` });
    }
    this.span.end();
  }
}
