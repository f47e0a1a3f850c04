import type { BodyEncoder } from "../../answer/answer-encoder.js";
import type { AnswerEvent, ChoiceSent, TokenUsage } from "../../answer/answer-events.js";
import type { ChatCompletion, SearchResult, Usage } from "./chat-completion.js";
import { type ChatChoice, type ChatEncoding, chatDeltas, contentOf, finishReasonOf, messageOf, newChatChoice, reasoningSent } from "./chat-choice.js";

/** The response-level facts of a completion or a stream of chunks. */
export interface CompletionMeta {
  /** `chatcmpl-` and the first choice's query id (see `completionId`). */
  id: string;
  created: number;
  model: string;
  choices: number;
}

/** The completion id: `chatcmpl-` and the first choice's query id, so a response leads to its query. */
export function completionId(queryId: string): string {
  return `chatcmpl-${queryId}`;
}

/** Usage as chat completions report it, with OpenAI's reasoning-token detail. */
export function chatUsage(usage: TokenUsage): Usage {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens },
  };
}

/** What each chat choice sent, for usage: the whole content, and the reasoning sent apart from it. */
export function chatSent(choices: readonly ChatChoice[], encoding: ChatEncoding): ChoiceSent[] {
  return choices.map((choice) => ({ content: contentOf(choice), reasoning: reasoningSent(choice, encoding) }));
}

/** Encodes a non-streamed answer as one `chat.completion` (docs/architecture/upstream.md#the-chat-completion-resource). */
export class ChatCompletionEncoder implements BodyEncoder<ChatCompletion> {
  private readonly choices: ChatChoice[];

  constructor(
    private readonly meta: CompletionMeta,
    private readonly encoding: ChatEncoding,
  ) {
    this.choices = Array.from({ length: meta.choices }, () => newChatChoice(encoding));
  }

  add(event: AnswerEvent): void {
    if (event.type === "failed") return;
    const choice = this.choices[event.choice];
    if (choice) chatDeltas(choice, event, this.encoding);
  }

  sent(): ChoiceSent[] {
    return chatSent(this.choices, this.encoding);
  }

  body(usage: TokenUsage): ChatCompletion {
    return {
      id: this.meta.id,
      object: "chat.completion",
      created: this.meta.created,
      model: this.meta.model,
      choices: this.choices.map((choice, index) => ({
        index,
        message: messageOf(choice, this.encoding),
        logprobs: null,
        finish_reason: finishReasonOf(this.encoding),
      })),
      usage: chatUsage(usage),
      ...perplexityFields(this.choices, this.encoding),
    };
  }
}

/**
 * Perplexity's top-level `citations` (the sources' URLs) and `search_results` (title, URL,
 * snippet), which Lobe Chat and other Perplexity-minded clients read and strict clients ignore;
 * nothing when no choice has sources.
 */
export function perplexityFields(
  choices: readonly ChatChoice[],
  encoding: ChatEncoding,
): { citations?: string[]; search_results?: SearchResult[] } {
  const results: SearchResult[] = [];
  for (const choice of choices) {
    choice.sources.forEach((source, index) => {
      const url = choice.urls[index] ?? encoding.links(source).url;
      const result: SearchResult = { title: source.title ?? source.filename ?? "source", url };
      if (source.snippet) result.snippet = source.snippet;
      results.push(result);
    });
  }
  if (results.length === 0) return {};
  return { citations: results.map((result) => result.url), search_results: results };
}
