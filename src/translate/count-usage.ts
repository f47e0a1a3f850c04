import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import type { Usage } from "../openai/chat-completion.js";

// Text is counted as plain text: special-token strings such as "<|endoftext|>" in a document
// are ordinary characters here, not a reason to throw.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/** Token usage the upstream reported, when it reports any (DESIGN.md, Contract item 8). */
export interface UpstreamUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
}

/**
 * Usage of one or more choices (DESIGN.md, Contract item 8). The upstream reports no tokens, so
 * the o200k tokenizer counts the prompt sent (once per choice, as each choice is its own query)
 * and what was returned: the content (with any `<think>` block or Sources list in it) and the
 * `reasoning_content`; the latter is part of `completion_tokens`, as OpenAI counts reasoning, and
 * also shown in `completion_tokens_details`. Upstream numbers win where present.
 */
export function countUsage(
  choices: readonly {
    prompt: string;
    content: string;
    reasoning: string;
    upstream?: UpstreamUsage | undefined;
  }[],
): Usage {
  let promptTokens = 0;
  let completionTokens = 0;
  let reasoningTokens = 0;
  for (const choice of choices) {
    const reasoning = choice.reasoning ? countTokens(choice.reasoning, PLAIN_TEXT) : 0;
    promptTokens += choice.upstream?.prompt_tokens ?? countTokens(choice.prompt, PLAIN_TEXT);
    completionTokens +=
      choice.upstream?.completion_tokens ?? countTokens(choice.content, PLAIN_TEXT) + reasoning;
    reasoningTokens += reasoning;
  }
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    completion_tokens_details: { reasoning_tokens: reasoningTokens },
  };
}
