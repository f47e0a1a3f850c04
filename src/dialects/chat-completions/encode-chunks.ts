import type { StreamEncoder } from "../../answer/answer-encoder.js";
import type { AnswerEvent, ChoiceSent, TokenUsage } from "../../answer/answer-events.js";
import type { SseFrame } from "../../core/sse-frame.js";
import type { AdapterError } from "../../errors/adapter-error.js";
import { errorBody } from "../../errors/error-body.js";
import type { ChatCompletionChunk, ChunkDelta } from "./chat-completion.js";
import { type ChatChoice, type ChatEncoding, chatDeltas, newChatChoice } from "./chat-choice.js";
import { type CompletionMeta, chatSent, chatUsage } from "./encode-completion.js";

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
    this.choices = Array.from({ length: meta.choices }, newChatChoice);
  }

  open(): SseFrame[] {
    return this.choices.map((_, index) => this.chunk(index, ROLE_DELTA));
  }

  encode(event: AnswerEvent): SseFrame[] {
    if (event.type === "failed") return [];
    if (event.type === "finished") return [this.chunk(event.choice, {}, "stop")];
    const choice = this.choices[event.choice];
    if (!choice) return [];
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

  private base() {
    return { id: this.meta.id, object: "chat.completion.chunk" as const, created: this.meta.created, model: this.meta.model };
  }

  private chunk(index: number, delta: ChunkDelta, finish: "stop" | null = null): SseFrame {
    const chunk: ChatCompletionChunk = { ...this.base(), choices: [{ index, delta, logprobs: null, finish_reason: finish }] };
    return { data: chunk };
  }
}
