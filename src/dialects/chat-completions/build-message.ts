import type { CompletionMessage } from "./chat-completion.js";
import type { QuerySnapshot } from "../../core/query-snapshot.js";
import { citeSources } from "../../answer/cite-sources.js";
import { codePointLength } from "../../answer/code-points.js";
import { renderSteps } from "../../answer/render-steps.js";
import { type CitationStyle, sourcesFooter } from "../../answer/sources-footer.js";

/** Where steps go (docs/upstream-assumptions.md#steps). */
export type StepsOutput = "reasoning" | "content" | "none";

/** Opening and closing of the reasoning block when steps go into the content. */
export const THINK_OPEN = "<think>\n";
/** Closing of the reasoning block: the output follows after a blank line. */
export const THINK_CLOSE = "\n</think>\n\n";

/** How finished answers are shaped: where steps go and how citations reach the client. */
export interface MessageOptions {
  stepsOutput: StepsOutput;
  citationStyle: CitationStyle;
}

/**
 * The assistant message of a finished query: output → content, steps → reasoning, sources and
 * markers → `sources` and `file_citation` annotations (docs/upstream-assumptions.md#steps and #sources-and-citations).
 * With steps in the content, they lead it inside `<think>` (as Open WebUI and LibreChat show
 * reasoning) and annotation offsets count from the start of the whole content. With the Markdown
 * citation style, a Sources list follows the output.
 */
export function buildMessage(snapshot: QuerySnapshot, options: MessageOptions): CompletionMessage {
  const reasoning = options.stepsOutput === "none" ? "" : renderSteps(snapshot.steps);
  const prefix = options.stepsOutput === "content" && reasoning ? `${THINK_OPEN}${reasoning}${THINK_CLOSE}` : "";
  const { annotations, sources } = citeSources(snapshot.output, snapshot.sources, codePointLength(prefix));
  const message: CompletionMessage = {
    role: "assistant",
    content: prefix + snapshot.output + sourcesFooter(snapshot.output, sources, options.citationStyle),
    refusal: null,
    annotations,
    sources,
  };
  if (options.stepsOutput === "reasoning") message.reasoning_content = reasoning;
  return message;
}
