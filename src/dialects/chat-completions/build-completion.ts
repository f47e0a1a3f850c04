import type { ChatCompletion, CompletionMessage } from "./chat-completion.js";
import type { UpstreamUsage } from "../../core/usage.js";
import type { TokenCounter } from "../../tokens/token-counter.js";
import { countUsage } from "../../answer/count-usage.js";

/** One finished choice: its message, and the usage the upstream reported for it (if any). */
export interface FinishedChoice {
  message: CompletionMessage;
  usage: UpstreamUsage | undefined;
}

/** The response-level facts of a completion. */
export interface CompletionMeta {
  id: string;
  created: number;
  model: string;
  prompt: string;
  /** The prompt's count, if it was started early (see `countSoon`). */
  promptTokens?: Promise<number> | undefined;
}

/** Assembles a `chat.completion` (docs/architecture.md#the-chat-completion-resource) from finished choices, in index order. */
export async function buildCompletion(
  meta: CompletionMeta,
  choices: readonly FinishedChoice[],
  counter: TokenCounter,
): Promise<ChatCompletion> {
  const promptTokens = await meta.promptTokens;
  const usage = await countUsage(
    choices.map((choice) => ({
      prompt: meta.prompt,
      promptTokens,
      content: choice.message.content,
      reasoning: choice.message.reasoning_content ?? "",
      upstream: choice.usage,
    })),
    counter,
  );
  return {
    id: meta.id,
    object: "chat.completion",
    created: meta.created,
    model: meta.model,
    choices: choices.map((choice, index) => ({
      index,
      message: choice.message,
      logprobs: null,
      finish_reason: "stop",
    })),
    usage,
  };
}

/** The completion id: `chatcmpl-` and the first choice's query id, so a response leads to its query. */
export function completionId(queryId: string): string {
  return `chatcmpl-${queryId}`;
}
