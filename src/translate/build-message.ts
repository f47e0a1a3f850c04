import type { CompletionMessage } from "../openai/chat-completion.js";
import type { QuerySnapshot } from "../upstream/query-snapshot.js";
import { citeSources } from "./cite-sources.js";
import { codePointLength } from "./code-points.js";
import { renderSteps } from "./render-steps.js";

/** Where steps go (DESIGN.md, Contract item 6). */
export type StepsOutput = "reasoning" | "content" | "none";

/** Opening and closing of the reasoning block when steps go into the content. */
export const THINK_OPEN = "<think>\n";
export const THINK_CLOSE = "\n</think>\n\n";

/**
 * The assistant message of a finished query: output → content, steps → reasoning, sources and
 * markers → `sources` and `file_citation` annotations (DESIGN.md, Contract items 6 and 7).
 * With steps in the content, they lead it inside `<think>` (as Open WebUI and LibreChat show
 * reasoning) and annotation offsets count from the start of the whole content.
 */
export function buildMessage(snapshot: QuerySnapshot, stepsOutput: StepsOutput): CompletionMessage {
  const reasoning = stepsOutput === "none" ? "" : renderSteps(snapshot.steps);
  const prefix = stepsOutput === "content" && reasoning ? `${THINK_OPEN}${reasoning}${THINK_CLOSE}` : "";
  const { annotations, sources } = citeSources(snapshot.output, snapshot.sources, codePointLength(prefix));
  const message: CompletionMessage = {
    role: "assistant",
    content: prefix + snapshot.output,
    refusal: null,
    annotations,
    sources,
  };
  if (stepsOutput === "reasoning") message.reasoning_content = reasoning;
  return message;
}
