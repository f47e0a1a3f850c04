import { advance, finish, newProgress } from "../../src/answer/choice-progress.js";
import type { AnswerEvent } from "../../src/answer/answer-events.js";
import { sourceLinker } from "../../src/answer/source-links.js";
import type { QuerySnapshot } from "../../src/core/query-snapshot.js";
import type { ChunkDelta, CompletionMessage } from "../../src/dialects/chat-completions/chat-completion.js";
import { type ChatEncoding, chatDeltas, finalDelta, messageOf, newChatChoice } from "../../src/dialects/chat-completions/chat-choice.js";

/** A chat encoding with test defaults: `file_citation`, and sources linked by `urn:` identifiers (no template, no page). */
export function encodingOf(partial: Partial<ChatEncoding> & Pick<ChatEncoding, "stepsOutput" | "citationStyle">): ChatEncoding {
  return { annotations: "file_citation", links: sourceLinker({ template: undefined, documentPage: undefined }, "acme"), ...partial };
}

/** The answer events of one choice's snapshots, as the core produces them for a stream. */
export function eventsOf(snapshots: readonly QuerySnapshot[], streamed = true): AnswerEvent[] {
  const progress = newProgress(0);
  return snapshots.flatMap((snapshot) =>
    snapshot.status === "PROCESSED" ? finish(progress, snapshot) : streamed ? advance(progress, snapshot) : [],
  );
}

/** The non-streamed message of a final snapshot, through the core and the chat encoding. */
export function messageFrom(snapshot: QuerySnapshot, partial: Parameters<typeof encodingOf>[0]): CompletionMessage {
  const encoding = encodingOf(partial);
  const choice = newChatChoice(encoding);
  for (const event of eventsOf([snapshot], false)) chatDeltas(choice, event, encoding);
  return messageOf(choice, encoding);
}

/** The deltas a stream of snapshots becomes, through the core and the chat encoding (the last one: annotations and sources). */
export function deltasOf(snapshots: readonly QuerySnapshot[], partial: Parameters<typeof encodingOf>[0]): ChunkDelta[] {
  const encoding = encodingOf(partial);
  const choice = newChatChoice(encoding);
  return eventsOf(snapshots).flatMap((event) => (event.type === "finished" ? [finalDelta(choice)] : chatDeltas(choice, event, encoding)));
}
