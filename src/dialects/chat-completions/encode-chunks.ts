import type { StreamEncoder } from "../../answer/answer-encoder.js";
import type { AnswerEvent, ChoiceSent, TokenUsage } from "../../answer/answer-events.js";
import type { SseFrame } from "../../core/sse-frame.js";
import type { AdapterError } from "../../errors/adapter-error.js";
import { errorBody } from "../../errors/error-body.js";
import type { ChatCompletionChunk, ChunkDelta } from "./chat-completion.js";
import type { CitedSource } from "../../core/source-record.js";
import { type ChatChoice, type ChatEncoding, chatDeltas, finalDelta, finishReasonOf, newChatChoice } from "./chat-choice.js";
import { type CompletionMeta, chatSent, chatUsage, perplexityFields } from "./encode-completion.js";

/** The first delta of every choice, as OpenAI sends it. */
const ROLE_DELTA: ChunkDelta = { role: "assistant", content: "" };
const DONE: SseFrame = { data: "[DONE]" };

/**
 * Encodes a streamed answer as `chat.completion.chunk`s in OpenAI's order: a role chunk per
 * choice, then steps as `reasoning_content` and output growth as `content` as they come,
 * interleaved by choice; per finished choice its annotations and sources in one chunk and a
 * finish chunk; then, when asked (`stream_options.include_usage`), one usage chunk with no
 * choices; then `[DONE]`. Data-only frames, which every OpenAI client reads. A failure after the
 * stream began is an error frame (openai-node raises it as an APIError) and `[DONE]`.
 */
export class ChatChunkEncoder implements StreamEncoder {
  private readonly choices: ChatChoice[];

  constructor(
    private readonly meta: CompletionMeta,
    private readonly encoding: ChatEncoding,
    readonly needsUsage: boolean,
  ) {
    this.choices = Array.from({ length: meta.choices }, () => newChatChoice(encoding));
  }

  open(): SseFrame[] {
    return this.choices.map((_, index) => this.chunk(index, ROLE_DELTA));
  }

  encode(event: AnswerEvent): SseFrame[] {
    if (event.type === "failed") return [];
    const choice = this.choices[event.choice];
    if (!choice) return [];
    if (event.type === "finished") return this.finish(event.choice, choice);
    return chatDeltas(choice, event, this.encoding).map((delta) => this.chunk(event.choice, delta));
  }

  sent(): ChoiceSent[] {
    return chatSent(this.choices, this.encoding);
  }

  close(usage: TokenUsage | undefined): SseFrame[] {
    if (!usage) return [DONE];
    const chunk: ChatCompletionChunk = { ...this.base(), choices: [], usage: chatUsage(usage) };
    return [{ data: chunk }, DONE];
  }

  fail(error: AdapterError): SseFrame[] {
    return [{ data: { error: errorBody(error).error } }, DONE];
  }

  /**
   * The chunks that finish a choice: Open WebUI's `source` events (one per source, on chunks with
   * no choices, which every client skips), then the finish chunk with the annotations and sources
   * and, as Perplexity sends them, the top-level `citations` and `search_results`.
   */
  private finish(index: number, choice: ChatChoice): SseFrame[] {
    const frames = choice.sources.map(
      (source): SseFrame => ({ data: { ...this.base(), choices: [], event: openWebUiSource(source, this.encoding) } }),
    );
    const last: ChatCompletionChunk = {
      ...this.base(),
      choices: [{ index, delta: finalDelta(choice), logprobs: null, finish_reason: finishReasonOf(this.encoding) }],
      ...perplexityFields([choice], this.encoding),
    };
    frames.push({ data: last });
    return frames;
  }

  private base() {
    return { id: this.meta.id, object: "chat.completion.chunk" as const, created: this.meta.created, model: this.meta.model };
  }

  private chunk(index: number, delta: ChunkDelta, finish: "stop" | "tool_calls" | null = null): SseFrame {
    const chunk: ChatCompletionChunk = { ...this.base(), choices: [{ index, delta, logprobs: null, finish_reason: finish }] };
    return { data: chunk };
  }
}

/**
 * Open WebUI's `source` event for one source (its `stream_body_handler` forwards a chunk's `event`
 * to the chat, which shows it as a source chip): name, document snippet, and metadata with the
 * link and page.
 */
function openWebUiSource(source: CitedSource, encoding: ChatEncoding): { type: "source"; data: Record<string, unknown> } {
  const name = source.filename ?? source.title ?? "source";
  const link = encoding.links(source);
  const title = source.title && source.filename ? `${source.filename} — ${source.title}` : name;
  const clickable = link.clickable ? { url: link.url } : {};
  return {
    type: "source",
    data: {
      source: { name, id: link.url, ...clickable },
      document: [source.snippet ?? title],
      metadata: [{ source: link.url, name: title, ...(source.page === null ? {} : { page: source.page }), ...clickable }],
    },
  };
}
