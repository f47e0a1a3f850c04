import { advance, finish, newProgress } from "../../src/answer/choice-progress.js";
import type { AnswerEvent } from "../../src/answer/answer-events.js";
import type { QuerySnapshot } from "../../src/core/query-snapshot.js";
import type { ChunkDelta, CompletionMessage } from "../../src/dialects/chat-completions/chat-completion.js";
import { type ChatEncoding, chatDeltas, messageOf, newChatChoice } from "../../src/dialects/chat-completions/chat-choice.js";

/** The answer events of one choice's snapshots, as the core produces them for a stream. */
export function eventsOf(snapshots: readonly QuerySnapshot[], streamed = true): AnswerEvent[] {
  const progress = newProgress(0);
  return snapshots.flatMap((snapshot) =>
    snapshot.status === "PROCESSED" ? finish(progress, snapshot) : streamed ? advance(progress, snapshot) : [],
  );
}

/** The non-streamed message of a final snapshot, through the core and the chat encoding. */
export function messageFrom(snapshot: QuerySnapshot, encoding: ChatEncoding): CompletionMessage {
  const choice = newChatChoice();
  for (const event of eventsOf([snapshot], false)) chatDeltas(choice, event, encoding);
  return messageOf(choice, encoding);
}

/** The deltas a stream of snapshots becomes, through the core and the chat encoding. */
export function deltasOf(snapshots: readonly QuerySnapshot[], encoding: ChatEncoding): ChunkDelta[] {
  const choice = newChatChoice();
  return eventsOf(snapshots).flatMap((event) => chatDeltas(choice, event, encoding));
}
