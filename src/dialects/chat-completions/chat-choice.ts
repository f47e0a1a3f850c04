import type { AnswerEvent, Citation } from "../../answer/answer-events.js";
import { codePointLength } from "../../answer/code-points.js";
import { type CitationStyle, sourcesFooter } from "../../answer/sources-footer.js";
import type { CitedSource } from "../../core/source-record.js";
import type { ChunkDelta, CompletionMessage, FileCitation } from "./chat-completion.js";

/** Where steps go (docs/upstream-assumptions.md#steps). */
export type StepsOutput = "reasoning" | "content" | "none";

/** Opening of the reasoning block when steps go into the content. */
export const THINK_OPEN = "<think>\n";
/** Closing of the reasoning block: the output follows after a blank line. */
export const THINK_CLOSE = "\n</think>\n\n";

/** How chat answers are shaped: where steps go and how citations reach the client. */
export interface ChatEncoding {
  stepsOutput: StepsOutput;
  citationStyle: CitationStyle;
}

/**
 * What one chat choice has been given so far: the explicit per-choice state of both chat
 * encoders, so a streamed answer concatenates to exactly the non-streamed one and annotations
 * describe exactly the content the client received.
 */
export interface ChatChoice {
  /** Reasoning sent as `reasoning_content` (or inside `<think>` in the content). */
  reasoning: string;
  /** Content sent before the output: the `<think>` block when steps go into the content. */
  prefix: string;
  thinkOpen: boolean;
  /** Output sent as `content`. */
  output: string;
  /** The Markdown Sources list sent after the output (citation style `markdown`). */
  footer: string;
  annotations: FileCitation[];
  sources: CitedSource[];
}

/** A choice nothing was sent of yet. */
export function newChatChoice(): ChatChoice {
  return { reasoning: "", prefix: "", thinkOpen: false, output: "", footer: "", annotations: [], sources: [] };
}

/**
 * The deltas one answer event adds to a choice (docs/upstream-assumptions.md#steps and
 * #sources-and-citations): reasoning as `reasoning_content`, or leading the content inside
 * `<think>` (as Open WebUI and LibreChat show reasoning; a step after the output began is left
 * out); text as `content`; citations as `file_citation` annotations shifted past the `<think>`
 * block, with the sources, complete in one delta (the OpenAI SDK's stream helper keeps only the
 * last value of delta keys it does not know, so they must not be split), after the Markdown
 * Sources list when that style is on.
 */
export function chatDeltas(choice: ChatChoice, event: AnswerEvent, encoding: ChatEncoding): ChunkDelta[] {
  switch (event.type) {
    case "reasoning": {
      if (encoding.stepsOutput === "reasoning") {
        choice.reasoning += event.text;
        return [{ reasoning_content: event.text }];
      }
      if (encoding.stepsOutput === "none" || choice.output !== "") return [];
      const opening = choice.thinkOpen ? "" : THINK_OPEN;
      choice.thinkOpen = true;
      choice.reasoning += event.text;
      choice.prefix += opening + event.text;
      return [{ content: opening + event.text }];
    }
    case "text": {
      const closing = closeThink(choice);
      choice.output += event.text;
      return [{ content: closing + event.text }];
    }
    case "cited": {
      const deltas: ChunkDelta[] = [];
      const closing = closeThink(choice);
      if (closing) deltas.push({ content: closing });
      choice.footer = sourcesFooter(choice.output, event.sources, encoding.citationStyle);
      if (choice.footer) deltas.push({ content: choice.footer });
      choice.annotations = fileCitations(event.citations, codePointLength(choice.prefix));
      choice.sources = event.sources;
      deltas.push({ annotations: choice.annotations, sources: choice.sources });
      return deltas;
    }
    default:
      return [];
  }
}

/** The content a choice's client has: `<think>` block, output, Sources list. */
export function contentOf(choice: ChatChoice): string {
  return choice.prefix + choice.output + choice.footer;
}

/** The assistant message of a finished choice (docs/architecture.md#the-chat-completion-resource). */
export function messageOf(choice: ChatChoice, encoding: ChatEncoding): CompletionMessage {
  const message: CompletionMessage = {
    role: "assistant",
    content: contentOf(choice),
    refusal: null,
    annotations: choice.annotations,
    sources: choice.sources,
  };
  if (encoding.stepsOutput === "reasoning") message.reasoning_content = choice.reasoning;
  return message;
}

/** The reasoning usage counts apart from the content: only what went out as `reasoning_content`. */
export function reasoningSent(choice: ChatChoice, encoding: ChatEncoding): string {
  return encoding.stepsOutput === "reasoning" ? choice.reasoning : "";
}

/** The interface's `file_citation` annotations (docs/architecture.md#the-chat-completion-resource). */
function fileCitations(citations: readonly Citation[], offset: number): FileCitation[] {
  return citations.map((citation) => ({
    type: "file_citation",
    file_citation: { filename: citation.filename },
    start_index: citation.start + offset,
    end_index: citation.end + offset,
  }));
}

function closeThink(choice: ChatChoice): string {
  if (!choice.thinkOpen) return "";
  choice.thinkOpen = false;
  choice.prefix += THINK_CLOSE;
  return THINK_CLOSE;
}
