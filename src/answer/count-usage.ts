import type { UpstreamUsage } from "../core/usage.js";
import type { TokenCounter } from "../tokens/token-counter.js";
import type { TokenUsage } from "./answer-events.js";

/** What one choice's usage is counted from. */
export interface UsageInput {
  prompt: string;
  /** The prompt's count, when it was counted already (while the upstream worked on it). */
  promptTokens?: number | undefined;
  content: string;
  reasoning: string;
  upstream?: UpstreamUsage | undefined;
}

/**
 * Usage of one or more choices (docs/upstream-assumptions.md#usage). The upstream reports no tokens, so
 * the o200k tokenizer counts the prompt sent (once per choice, as each choice is its own query)
 * and what was returned: the content (with any `<think>` block or Sources list in it) and the
 * reasoning; the latter is part of the completion tokens, as OpenAI counts reasoning, and also
 * reported on its own. Upstream numbers win where present.
 */
export async function countUsage(choices: readonly UsageInput[], counter: TokenCounter): Promise<TokenUsage> {
  // Three texts per choice, in turn: its prompt (unless counted already), content and reasoning.
  const texts: string[] = [];
  for (const choice of choices) texts.push(choice.promptTokens === undefined ? choice.prompt : "", choice.content, choice.reasoning);
  const counts = await counter.count(texts);
  let promptTokens = 0;
  let completionTokens = 0;
  let reasoningTokens = 0;
  for (let index = 0; index < choices.length; index += 1) {
    const choice = choices[index] as UsageInput;
    const prompt = counts[3 * index] ?? 0;
    const content = counts[3 * index + 1] ?? 0;
    const reasoning = counts[3 * index + 2] ?? 0;
    promptTokens += choice.upstream?.prompt_tokens ?? choice.promptTokens ?? prompt;
    completionTokens += choice.upstream?.completion_tokens ?? content + reasoning;
    reasoningTokens += reasoning;
  }
  return { promptTokens, completionTokens, reasoningTokens };
}
