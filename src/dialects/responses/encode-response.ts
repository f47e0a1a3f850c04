import { hash } from "node:crypto";
import type { BodyEncoder, StreamEncoder } from "../../answer/answer-encoder.js";
import type { AnswerEvent, ChoiceSent, Citation, TokenUsage } from "../../answer/answer-events.js";
import type { CitedSource } from "../../core/source-record.js";
import type { SseFrame } from "../../core/sse-frame.js";
import { type AdapterError, GatewayTimeoutError, QueryFailedError } from "../../errors/adapter-error.js";
import type {
  OutputItem,
  OutputMessage,
  OutputText,
  ReasoningItem,
  ResponseFileCitation,
  ResponseObject,
  ResponseUsage,
} from "./response-object.js";
import type { ResponseMeta } from "./response-meta.js";

export type { ResponseMeta } from "./response-meta.js";

/** What the answer gave a response so far: text, reasoning and citations, in the order items opened. */
export interface ResponseState {
  reasoning: string;
  reasoningOpen: boolean;
  text: string;
  messageOpen: boolean;
  messageDone: boolean;
  annotations: ResponseFileCitation[];
  /** The citations and sources as the core gave them: what a stored response replays. */
  citations: Citation[];
  sources: CitedSource[];
  /** Items in output order. */
  order: ("reasoning" | "message")[];
}

/**
 * A stable, synthetic file id per source: `file-` and a hash of its name, title and page, so the
 * same source has the same id in every response, and two sections of one file stay two sources.
 */
export function fileIdOf(name: string, source?: CitedSource): string {
  const key = [name.toLowerCase(), source?.title?.toLowerCase() ?? "", source?.page ?? ""].join("\u0000");
  return `file-${hash("sha256", key, "hex").slice(0, 24)}`;
}

/** Usage as the Responses API reports it. */
export function responseUsage(usage: TokenUsage): ResponseUsage {
  return {
    input_tokens: usage.promptTokens,
    input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
    output_tokens: usage.completionTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

/**
 * Folds one answer event into a response's state: steps into the reasoning item (which precedes
 * the message; a step that arrives after the answer text began is left out, as steps come before
 * the output in the interface), text into the message, citations into `file_citation`
 * annotations whose `index` is the marker's start (docs/upstream-assumptions.md#sources-and-citations).
 */
function apply(state: ResponseState, event: AnswerEvent): void {
  if (event.type === "reasoning" && !state.messageOpen) {
    if (!state.reasoningOpen) state.order.push("reasoning");
    state.reasoningOpen = true;
    state.reasoning += event.text;
  } else if (event.type === "text") {
    openMessage(state);
    state.text += event.text;
  } else if (event.type === "cited") {
    openMessage(state);
    state.citations = event.citations;
    state.sources = event.sources;
    state.annotations = event.citations.map((citation) => annotationOf(citation, event.sources[citation.source]));
    state.messageDone = true;
  }
}

function openMessage(state: ResponseState): void {
  if (state.messageOpen) return;
  state.messageOpen = true;
  state.order.push("message");
}

function annotationOf(citation: Citation, source: CitedSource | undefined): ResponseFileCitation {
  const annotation: ResponseFileCitation = {
    type: "file_citation",
    file_id: fileIdOf(citation.filename, source),
    filename: citation.filename,
    index: citation.start,
  };
  if (source?.title) annotation.title = source.title;
  if (source?.page !== null && source?.page !== undefined) annotation.page = source.page;
  if (source?.snippet) annotation.snippet = source.snippet;
  return annotation;
}

function newState(): ResponseState {
  return { reasoning: "", reasoningOpen: false, text: "", messageOpen: false, messageDone: false, annotations: [], citations: [], sources: [], order: [] };
}

const itemId = (meta: ResponseMeta, kind: "rs" | "msg") => `${kind}_${meta.id.slice("resp_".length)}`;

function reasoningItem(meta: ResponseMeta, state: ResponseState): ReasoningItem {
  return { type: "reasoning", id: itemId(meta, "rs"), summary: [{ type: "summary_text", text: state.reasoning }] };
}

function outputText(state: ResponseState): OutputText {
  return { type: "output_text", text: state.text, annotations: state.annotations, logprobs: [] };
}

function messageItem(meta: ResponseMeta, state: ResponseState): OutputMessage {
  return { type: "message", id: itemId(meta, "msg"), status: state.messageDone ? "completed" : "in_progress", role: "assistant", content: [outputText(state)] };
}

function outputOf(meta: ResponseMeta, state: ResponseState): OutputItem[] {
  return state.order.map((kind) => (kind === "reasoning" ? reasoningItem(meta, state) : messageItem(meta, state)));
}

/** How a response ended: completed with its usage, failed with its error, or cancelled by its caller. */
export type ResponseEnd =
  | { status: "completed"; usage: TokenUsage; at: number }
  | { status: "failed"; error: AdapterError; at: number }
  | { status: "cancelled"; at: number };

/** The response object of a state: `in_progress` with what is known, or ended (completed with its usage, failed, cancelled). */
export function responseOf(
  meta: ResponseMeta,
  state: ResponseState | null,
  end: ResponseEnd | null,
): ResponseObject {
  return {
    id: meta.id,
    object: "response",
    created_at: meta.createdAt,
    status: end?.status ?? "in_progress",
    completed_at: end?.status === "completed" ? end.at : null,
    error: end?.status === "failed" ? { code: "server_error", message: end.error.message } : null,
    incomplete_details: null,
    instructions: meta.instructions,
    max_output_tokens: meta.maxOutputTokens,
    model: meta.model,
    output: state ? outputOf(meta, state) : [],
    parallel_tool_calls: meta.parallelToolCalls,
    previous_response_id: meta.previousResponseId,
    reasoning: meta.reasoning,
    store: meta.store,
    temperature: meta.temperature,
    text: { format: { type: "text" } },
    tool_choice: meta.toolChoice,
    tools: meta.tools,
    top_p: meta.topP,
    truncation: meta.truncation,
    metadata: meta.metadata,
    ...(end?.status === "completed" ? { usage: responseUsage(end.usage) } : {}),
    ...(meta.user === null ? {} : { user: meta.user }),
    ...(meta.background ? { background: true } : {}),
    ...(meta.conversation ? { conversation: { id: meta.conversation } } : {}),
  };
}

/** What both Responses encoders report they sent, and keep of a finished answer for the store. */
abstract class ResponseEncoding {
  protected readonly state = newState();
  /** The finished response object, once there is one. */
  finished: ResponseObject | undefined;
  /** The usage counted for it. */
  usage: TokenUsage | undefined;

  constructor(
    readonly meta: ResponseMeta,
    /** Seconds since the epoch, for `completed_at`. */
    protected readonly now: () => number,
  ) {}

  sent(): ChoiceSent[] {
    return [{ content: this.state.text, reasoning: this.state.reasoning }];
  }

  /** The answer as the core gave it: what a stored response replays its events from. */
  get answer(): Pick<ResponseState, "reasoning" | "text" | "citations" | "sources"> {
    const { reasoning, text, citations, sources } = this.state;
    return { reasoning, text, citations, sources };
  }

  /** The response as it stands: in progress with what was sent so far, or ended without completing (failed, cancelled). */
  current(end: Exclude<ResponseEnd, { status: "completed" }> | null = null): ResponseObject {
    return responseOf(this.meta, this.state, end);
  }

  protected complete(usage: TokenUsage): ResponseObject {
    this.usage = usage;
    this.finished = responseOf(this.meta, this.state, { status: "completed", usage, at: this.now() });
    return this.finished;
  }
}

/** Encodes a non-streamed answer as one response object. */
export class ResponseBodyEncoder extends ResponseEncoding implements BodyEncoder<ResponseObject> {
  add(event: AnswerEvent): void {
    apply(this.state, event);
  }

  body(usage: TokenUsage): ResponseObject {
    return this.complete(usage);
  }
}

/**
 * A stream encoder brought to the end of an event log it (on another replica) wrote: the log's
 * deltas fed again as the events they came from, which gives the same frames with the same
 * numbers. Null when that cannot be: the log does not match, or it reached the citations (the
 * answer's end, which cannot be encoded twice).
 */
export function resumeStreamEncoder(
  meta: ResponseMeta,
  now: () => number,
  frames: readonly SseFrame[],
): ResponseStreamEncoder | null {
  const encoder = new ResponseStreamEncoder(meta, now);
  let count = encoder.open().length;
  for (const frame of frames) {
    const data = frame.data as { type?: string; delta?: string };
    if (data.type === "response.reasoning_summary_text.delta") {
      count += encoder.encode({ type: "reasoning", choice: 0, text: data.delta ?? "", steps: [] }).length;
    } else if (data.type === "response.output_text.delta") {
      count += encoder.encode({ type: "text", choice: 0, text: data.delta ?? "" }).length;
    } else if (data.type === "response.output_text.done") {
      return null;
    }
  }
  return count === frames.length ? encoder : null;
}

/**
 * Encodes a streamed answer as the Responses API's named events, each with a rising
 * `sequence_number`: `response.created` and `response.in_progress`; the reasoning item's summary
 * as it grows; the message item's text as it grows; one `response.output_text.annotation.added`
 * per citation; the items' `done` events; `response.completed` with the whole response and its
 * usage. A FAILED query or a deadline is `response.failed`; any other failure after the stream
 * began an `error` event. No custom event types: the openai SDK's stream helper throws on them.
 */
export class ResponseStreamEncoder extends ResponseEncoding implements StreamEncoder {
  readonly needsUsage = true;
  private sequence = 0;

  open(): SseFrame[] {
    const response = responseOf(this.meta, null, null);
    return [this.frame("response.created", { response }), this.frame("response.in_progress", { response })];
  }

  encode(event: AnswerEvent): SseFrame[] {
    const { state } = this;
    const frames: SseFrame[] = [];
    if (event.type === "reasoning") {
      if (state.messageOpen) return frames;
      if (!state.reasoningOpen) {
        apply(state, { ...event, text: "" });
        const at = this.indexOf("reasoning");
        frames.push(
          this.frame("response.output_item.added", { output_index: at, item: { type: "reasoning", id: itemId(this.meta, "rs"), summary: [] } }),
          this.frame("response.reasoning_summary_part.added", {
            item_id: itemId(this.meta, "rs"),
            output_index: at,
            summary_index: 0,
            part: { type: "summary_text", text: "" },
          }),
        );
      }
      apply(state, event);
      frames.push(
        this.frame("response.reasoning_summary_text.delta", {
          item_id: itemId(this.meta, "rs"),
          output_index: this.indexOf("reasoning"),
          summary_index: 0,
          delta: event.text,
        }),
      );
      return frames;
    }
    if (event.type === "text") {
      frames.push(...this.startMessage());
      apply(state, event);
      frames.push(this.frame("response.output_text.delta", { ...this.textPosition(), delta: event.text, logprobs: [] }));
      return frames;
    }
    if (event.type === "cited") {
      frames.push(...this.startMessage());
      apply(state, event);
      state.annotations.forEach((annotation, index) => {
        frames.push(this.frame("response.output_text.annotation.added", { ...this.textPosition(), annotation_index: index, annotation }));
      });
      const part = outputText(state);
      frames.push(
        this.frame("response.output_text.done", { ...this.textPosition(), text: state.text, logprobs: [] }),
        this.frame("response.content_part.done", { ...this.textPosition(), part }),
        this.frame("response.output_item.done", { output_index: this.indexOf("message"), item: messageItem(this.meta, state) }),
      );
    }
    return frames;
  }

  close(usage: TokenUsage | undefined): SseFrame[] {
    return [this.frame("response.completed", { response: this.complete(usage ?? { promptTokens: 0, completionTokens: 0, reasoningTokens: 0 }) })];
  }

  fail(error: AdapterError): SseFrame[] {
    if (error instanceof QueryFailedError || error instanceof GatewayTimeoutError) {
      return [this.frame("response.failed", { response: responseOf(this.meta, this.state, { status: "failed", error, at: this.now() }) })];
    }
    return [this.frame("error", { code: error.code, message: error.message, param: error.param })];
  }

  /** Closes the reasoning item, then opens the message item (once). */
  private startMessage(): SseFrame[] {
    const { state } = this;
    if (state.messageOpen) return [];
    const frames: SseFrame[] = [];
    if (state.reasoningOpen) {
      const position = { item_id: itemId(this.meta, "rs"), output_index: this.indexOf("reasoning"), summary_index: 0 };
      frames.push(
        this.frame("response.reasoning_summary_text.done", { ...position, text: state.reasoning }),
        this.frame("response.reasoning_summary_part.done", { ...position, part: { type: "summary_text", text: state.reasoning } }),
        this.frame("response.output_item.done", { output_index: position.output_index, item: reasoningItem(this.meta, state) }),
      );
    }
    openMessage(state);
    const at = this.indexOf("message");
    frames.push(
      this.frame("response.output_item.added", {
        output_index: at,
        item: { type: "message", id: itemId(this.meta, "msg"), status: "in_progress", role: "assistant", content: [] },
      }),
      this.frame("response.content_part.added", { ...this.textPosition(), part: { type: "output_text", text: "", annotations: [], logprobs: [] } }),
    );
    return frames;
  }

  private textPosition() {
    return { item_id: itemId(this.meta, "msg"), output_index: this.indexOf("message"), content_index: 0 };
  }

  private indexOf(kind: "reasoning" | "message"): number {
    return this.state.order.indexOf(kind);
  }

  private frame(type: string, fields: Record<string, unknown>): SseFrame {
    const data = { type, sequence_number: this.sequence, ...fields };
    this.sequence += 1;
    return { event: type, data };
  }
}
