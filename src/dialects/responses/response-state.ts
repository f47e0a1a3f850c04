import { hash } from "node:crypto";
import type { AnswerEvent, Citation } from "../../answer/answer-events.js";
import type { CitedSource } from "../../core/source-record.js";
import type { Annotate } from "./response-annotations.js";
import type { ResponseAnnotation } from "./response-object.js";

/** What the answer gave a response so far: text, reasoning and citations, in the order items opened. */
export interface ResponseState {
  reasoning: string;
  reasoningOpen: boolean;
  text: string;
  messageOpen: boolean;
  messageDone: boolean;
  annotations: ResponseAnnotation[];
  /** The citations and sources as the core gave them: what a stored response replays. */
  citations: Citation[];
  sources: CitedSource[];
  /** Items in output order. */
  order: ("reasoning" | "message")[];
}

/** A response's state before any event: no item open. */
export function newResponseState(): ResponseState {
  return { reasoning: "", reasoningOpen: false, text: "", messageOpen: false, messageDone: false, annotations: [], citations: [], sources: [], order: [] };
}

/**
 * Folds one answer event into a response's state: steps into the reasoning item (which precedes
 * the message; a step that arrives after the answer text began is left out, as steps come before
 * the output in the interface), text into the message, citations into annotations in the
 * response's format (`annotate`: `response-annotations.ts`; docs/upstream-assumptions.md#sources-and-citations).
 */
export function applyEvent(
  state: ResponseState,
  event: AnswerEvent,
  annotate: Annotate,
): void {
  if (event.type === "reasoning" && !state.messageOpen) {
    if (!state.reasoningOpen) state.order.push("reasoning");
    state.reasoningOpen = true;
    state.reasoning += event.text;
  } else if (event.type === "text") {
    openMessage(state);
    state.text += event.text;
  } else if (event.type === "cited") {
    openMessage(state);
    state.citations = event.citations;
    state.sources = event.sources;
    state.annotations = annotate(event.citations, event.sources);
    state.messageDone = true;
  }
}

/** Opens the message item (once): it follows the reasoning item, if any. */
export function openMessage(state: ResponseState): void {
  if (state.messageOpen) return;
  state.messageOpen = true;
  state.order.push("message");
}

/**
 * A stable, synthetic file id per source: `file-` and a hash of its name, title and page, so the
 * same source has the same id in every response, and two sections of one file stay two sources.
 * `known` holds the ids already made for one answer, whose markers cite a source more than once.
 */
export function fileIdOf(name: string, source?: CitedSource, known?: Map<string, string>): string {
  const key = `${name.toLowerCase()}\u0000${source?.title?.toLowerCase() ?? ""}\u0000${source?.page ?? ""}`;
  let id = known?.get(key);
  if (id === undefined) {
    id = `file-${hash("sha256", key, "hex").slice(0, 24)}`;
    known?.set(key, id);
  }
  return id;
}
