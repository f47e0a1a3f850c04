import type { AnswerEvent, Citation } from "../../answer/answer-events.js";
import { codePointLength } from "../../answer/code-points.js";
import type { SourceLinker } from "../../answer/source-links.js";
import { type CitationStyle, sourcesFooter } from "../../answer/sources-footer.js";
import type { CitedSource } from "../../core/source-record.js";
import type { ChatAnnotation, ChunkDelta, CompletionMessage, ToolCall } from "./chat-completion.js";
import { linkMarkers, type MarkerLinks, newMarkerLinks, shifted } from "./link-markers.js";

/** Where steps go (docs/upstream-assumptions.md#steps). */
export type StepsOutput = "reasoning" | "content" | "none";

/** The annotation format of a chat answer (docs/architecture/dialects.md#citation-formats). */
export type AnnotationFormat = "file_citation" | "url_citation" | "none";

/** Opening of the reasoning block when steps go into the content. */
export const THINK_OPEN = "<think>\n";
/** Closing of the reasoning block: the output follows after a blank line. */
export const THINK_CLOSE = "\n</think>\n\n";

/** How a chat answer is shaped: where steps go, how citations reach the client, where sources link to. */
export interface ChatEncoding {
  stepsOutput: StepsOutput;
  citationStyle: CitationStyle;
  annotations: AnnotationFormat;
  links: SourceLinker;
  /** The answer is this forced function's call, its text the arguments (docs/structured-answers.md#a-forced-function). */
  call?: { id: string; name: string } | undefined;
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
  /** Output sent as `content` (with marker links, in the Markdown style). */
  output: string;
  /** The Markdown Sources list sent after the output (citation style `markdown`). */
  footer: string;
  /** Marker links being made (citation style `markdown`). */
  links: MarkerLinks | null;
  annotations: ChatAnnotation[];
  sources: CitedSource[];
  /** The URL of each of `sources` (same order), linked once for the annotations and the Perplexity fields. */
  urls: string[];
}

/** A choice nothing was sent of yet. */
export function newChatChoice(encoding: ChatEncoding): ChatChoice {
  return {
    reasoning: "",
    prefix: "",
    thinkOpen: false,
    output: "",
    footer: "",
    links: encoding.citationStyle === "markdown" ? newMarkerLinks() : null,
    annotations: [],
    sources: [],
    urls: [],
  };
}

/**
 * The content and reasoning deltas one answer event adds to a choice (docs/upstream-assumptions.md#steps
 * and #sources-and-citations): reasoning as `reasoning_content`, or leading the content inside
 * `<think>` (as Open WebUI and LibreChat show reasoning; a step after the output began is left
 * out); text as `content` (in the Markdown style, a marker that names a document becomes a link to
 * it, held back until it is complete); at `cited`, the rest, the Markdown Sources list, and the
 * annotations in the request's format, kept for the choice's last delta (`finalDelta`).
 */
export function chatDeltas(choice: ChatChoice, event: AnswerEvent, encoding: ChatEncoding): ChunkDelta[] {
  switch (event.type) {
    case "reasoning": {
      if (encoding.stepsOutput === "reasoning") {
        choice.reasoning += event.text;
        return [{ reasoning_content: event.text }];
      }
      if (encoding.stepsOutput === "none" || choice.output !== "" || choice.prefix.endsWith(THINK_CLOSE)) return [];
      const opening = choice.thinkOpen ? "" : THINK_OPEN;
      choice.thinkOpen = true;
      choice.reasoning += event.text;
      choice.prefix += opening + event.text;
      return [{ content: opening + event.text }];
    }
    case "text": {
      if (encoding.call) {
        choice.output += event.text;
        return [{ tool_calls: [{ index: 0, ...toolCallOf(encoding.call, event.text) }] }];
      }
      const closing = closeThink(choice);
      const text = choice.links ? linkMarkers(choice.links, event.text, encoding.links, false) : event.text;
      choice.output += text;
      return closing || text ? [{ content: closing + text }] : [];
    }
    case "cited": {
      choice.sources = event.sources;
      choice.urls = event.sources.map((source) => encoding.links(source).url);
      // A call has no content for annotations to point into: its sources stay beside it.
      if (encoding.call) return [];
      const deltas: ChunkDelta[] = [];
      const rest = choice.links ? linkMarkers(choice.links, "", encoding.links, true) : "";
      const closing = closeThink(choice);
      if (closing || rest) deltas.push({ content: closing + rest });
      choice.output += rest;
      choice.footer = sourcesFooter(choice.output, event.sources, encoding.citationStyle, encoding.links);
      if (choice.footer) deltas.push({ content: choice.footer });
      choice.annotations = annotationsOf(choice, event.citations, encoding);
      return deltas;
    }
    default:
      return [];
  }
}

/**
 * The last delta of a finished choice: its annotations and sources, complete in one delta (the
 * OpenAI SDK's stream helper keeps only the last value of delta keys it does not know, so they
 * must not be split; Lobe Chat reads annotations only from the chunk that finishes the choice).
 */
export function finalDelta(choice: ChatChoice): ChunkDelta {
  return { annotations: choice.annotations, sources: choice.sources };
}

/** The content a choice's client has: `<think>` block, output, Sources list. */
export function contentOf(choice: ChatChoice): string {
  return choice.prefix + choice.output + choice.footer;
}

/** The assistant message of a finished choice (docs/architecture/upstream.md#the-chat-completion-resource): its content, or the forced function's call. */
export function messageOf(choice: ChatChoice, encoding: ChatEncoding): CompletionMessage {
  const message: CompletionMessage = {
    role: "assistant",
    content: encoding.call ? null : contentOf(choice),
    refusal: null,
    annotations: choice.annotations,
    sources: choice.sources,
  };
  if (encoding.call) message.tool_calls = [toolCallOf(encoding.call, choice.output)];
  if (encoding.stepsOutput === "reasoning") message.reasoning_content = choice.reasoning;
  return message;
}

/** The reasoning usage counts apart from the content: only what went out as `reasoning_content`. */
export function reasoningSent(choice: ChatChoice, encoding: ChatEncoding): string {
  return encoding.stepsOutput === "reasoning" ? choice.reasoning : "";
}

/**
 * Citations as annotations of the content the client received: spans moved past the `<think>`
 * block and any marker links inserted before them; `file_citation` (the interface's shape),
 * `url_citation` (OpenAI's chat shape, with the source's link and title), or none.
 */
function annotationsOf(choice: ChatChoice, citations: readonly Citation[], encoding: ChatEncoding): ChatAnnotation[] {
  if (encoding.annotations === "none") return [];
  const offset = codePointLength(choice.prefix);
  const insertions = choice.links?.insertions ?? [];
  return citations.map((citation) => {
    const start = shifted(citation.start, insertions) + offset;
    const end = shifted(citation.end, insertions) + offset;
    if (encoding.annotations === "file_citation") {
      return { type: "file_citation", file_citation: { filename: citation.filename }, start_index: start, end_index: end };
    }
    const source = choice.sources[citation.source];
    const url =
      choice.urls[citation.source] ?? encoding.links({ filename: citation.filename, title: null, page: null, snippet: null }).url;
    return { type: "url_citation", url_citation: { url, title: source?.title ?? citation.filename, start_index: start, end_index: end } };
  });
}

/** Why a choice ended, as chat completions say it. */
export function finishReasonOf(encoding: ChatEncoding): "stop" | "tool_calls" {
  return encoding.call ? "tool_calls" : "stop";
}

function toolCallOf(call: { id: string; name: string }, args: string): ToolCall {
  return { id: call.id, type: "function", function: { name: call.name, arguments: args } };
}

function closeThink(choice: ChatChoice): string {
  if (!choice.thinkOpen) return "";
  choice.thinkOpen = false;
  choice.prefix += THINK_CLOSE;
  return THINK_CLOSE;
}
