import type { Span } from "@opentelemetry/api";
import type { QuerySnapshot } from "../core/query-snapshot.js";
import { ADAPTER, CREDENTIAL_HASH_PREFIX_LENGTH, EVENT, GEN_AI, type GenAiOperation, HTTP, PROVIDER_NAME, SPAN } from "./names.js";
import { withFacts } from "./recorded-span.js";
import { factKey, type FactWriter, type SpanFacts } from "./span-facts.js";
import { KIND, type SpanStart, STATUS_ERROR, type Tracing } from "./tracing.js";

/** What an answer's span starts with: known once the edge admitted the request. */
export interface AnswerStart {
  /** `chat` for the OpenAI dialects; `execute_tool` for an MCP tool call. */
  operation: GenAiOperation;
  /** The model as the client named it (`ask`, `acme/ask`). */
  model: string;
  /** The interaction mode the model picked: the model that answers. */
  mode: string;
  workspace: string;
  stream: boolean;
  /** A hash of the client's credential (`Identity.principal`): only its first characters go on the span. */
  principal: string;
  /** Who asked (`Identity.account`: a key's name, a gateway identity; never a key). */
  account?: string | undefined;
  /** The MCP tool's name (`execute_tool` only). */
  tool?: string;
}

/** What the client was sent of one choice (the encoder's `sent()`). */
interface SentChoice {
  content: string;
  reasoning: string;
}

/** Token usage as the answer core counts it. */
interface CountedUsage {
  promptTokens: number;
  completionTokens: number;
  reasoningTokens: number;
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

const OPERATION = factKey(GEN_AI.operationName);
const PROVIDER = factKey(GEN_AI.providerName);
const REQUEST_MODEL = factKey(GEN_AI.requestModel);
const RESPONSE_MODEL = factKey(GEN_AI.responseModel);
const STREAM = factKey(GEN_AI.requestStream);
const WORKSPACE = factKey(ADAPTER.workspace);
const MODE = factKey(ADAPTER.mode);
const CREDENTIAL_HASH_PREFIX = factKey(ADAPTER.credentialHashPrefix);
const CLIENT_KEY = factKey(ADAPTER.clientKey);
const TOOL_NAME = factKey(GEN_AI.toolName);
const TOOL_TYPE = factKey(GEN_AI.toolType);
const CHOICE_COUNT = factKey(GEN_AI.requestChoiceCount);
const CONTINUED = factKey(ADAPTER.continued);
const INPUT_MESSAGES = factKey(GEN_AI.inputMessages);
const CONVERSATION_ID = factKey(GEN_AI.conversationId);
const QUERY_IDS = factKey(ADAPTER.queryIds);
const RESPONSE_ID = factKey(GEN_AI.responseId);
const OUTPUT_MESSAGES = factKey(GEN_AI.outputMessages);
const INPUT_TOKENS = factKey(GEN_AI.inputTokens);
const OUTPUT_TOKENS = factKey(GEN_AI.outputTokens);
const REASONING_TOKENS = factKey(GEN_AI.reasoningOutputTokens);
const ERROR_TYPE = factKey(HTTP.errorType);
const FINISH_REASONS = factKey(GEN_AI.finishReasons);
const COMPLETED = factKey(ADAPTER.completed);

/** How an answer's span starts: its attributes are facts (`withFacts`). */
const ANSWER: SpanStart = { kind: KIND.internal };

/** The facts of an answer's span, in the order the span has always listed them: what the request asked, then what the answer did. */
class AnswerFacts implements SpanFacts {
  choiceCount: number | undefined = undefined;
  continued: boolean | undefined = undefined;
  inputMessages: string | undefined = undefined;
  /** Each choice's query id, by choice (a choice's query may be created before an earlier one's). */
  readonly queryIds: string[] = [];
  responseId: string | undefined = undefined;
  outputMessages: string | undefined = undefined;
  usage: CountedUsage | undefined = undefined;
  errorType: string | undefined = undefined;
  /** Each choice's finish reason, by choice, once the answer ended. */
  finishReasons: readonly string[] | undefined = undefined;
  completed: boolean | undefined = undefined;

  constructor(private readonly start: AnswerStart) {}

  write(out: FactWriter): void {
    const { start, usage } = this;
    out.fact(OPERATION, start.operation);
    out.fact(PROVIDER, PROVIDER_NAME);
    out.fact(REQUEST_MODEL, start.model);
    out.fact(RESPONSE_MODEL, start.mode);
    out.fact(STREAM, start.stream);
    out.fact(WORKSPACE, start.workspace);
    out.fact(MODE, start.mode);
    out.fact(CREDENTIAL_HASH_PREFIX, start.principal.slice(0, CREDENTIAL_HASH_PREFIX_LENGTH));
    out.fact(CLIENT_KEY, start.account);
    if (start.tool !== undefined) {
      out.fact(TOOL_NAME, start.tool);
      out.fact(TOOL_TYPE, "function");
    }
    out.fact(CHOICE_COUNT, this.choiceCount);
    out.fact(CONTINUED, this.continued);
    out.fact(INPUT_MESSAGES, this.inputMessages);
    out.fact(CONVERSATION_ID, this.queryIds[0]);
    if (this.queryIds.length > 0) out.fact(QUERY_IDS, dense(this.queryIds));
    out.fact(RESPONSE_ID, this.responseId);
    out.fact(OUTPUT_MESSAGES, this.outputMessages);
    if (usage) {
      out.fact(INPUT_TOKENS, usage.promptTokens);
      out.fact(OUTPUT_TOKENS, usage.completionTokens);
      out.fact(REASONING_TOKENS, usage.reasoningTokens);
    }
    out.fact(ERROR_TYPE, this.errorType);
    out.fact(FINISH_REASONS, this.finishReasons);
    out.fact(COMPLETED, this.completed);
  }
}

/** The values of a list filled by index, without its holes (the list itself when it has none). */
function dense(values: readonly (string | undefined)[]): readonly string[] {
  for (let index = 0; index < values.length; index += 1) {
    if (values[index] === undefined) return values.filter((value): value is string => value !== undefined);
  }
  return values as readonly string[];
}

/**
 * One answer's span — `chat {model}`, or `execute_tool {name}` — and everything recorded on it,
 * called at the points the adapter already has: the edge starts it once a request is admitted,
 * the answer core reports the plan, each query created and each snapshot (first step, first
 * text, terminal status become events), the watcher's realtime channel reports its first
 * publication, the writer reports what was delivered and its usage, and the edge ends it when
 * the response closes. Upstream calls made for the answer are its children. Its attributes are
 * facts (`span-facts.ts`), kept only for a span the sampler records. Message content goes on it
 * only when the operator opted in (`Tracing.capturesContent`).
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
    this.facts = this.span.isRecording() ? withFacts(this.span, new AnswerFacts(start)) : undefined;
  }

  within<T>(work: () => T): T {
    return this.tracing.withParentSpan(this.span, work);
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
    if (facts) {
      const finishReasons = dense(this.finishReasons);
      if (finishReasons.length > 0) facts.finishReasons = finishReasons;
      facts.completed = completed;
    }
    // A performance timestamp: the SDK places it on the span's own clock.
    const at = performance.now();
    if (this.pending) void this.pending.then(() => this.span.end(at));
    else this.span.end(at);
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
