import type { IncomingMessage } from "node:http";
import type { Config } from "../../config/config.js";
import type { ConversationsApi } from "../../continuity/conversations-api/conversations-api.js";
import type { ThreadScope } from "../../continuity/threads/thread-keys.js";
import { conversationIdFrom, type ThreadHints, type ThreadMemory } from "../../continuity/threads/thread-memory.js";
import { NO_THREAD } from "../../dialects/responses/compaction.js";
import { callsOf, type KnownCall, type ReadInput, type StoredInputItem } from "../../dialects/responses/read-input.js";
import { toolResultsPrompt } from "../../dialects/responses/tool-results.js";
import { NotFoundError } from "../../errors/adapter-error.js";
import { resolveReferences, type ResponseLookup, visibleConversation, visibleResponse } from "./response-lookups.js";
import type { StoredResponse } from "./response-turns.js";

/** The stores a Responses request's continuation is looked up in. */
export interface ContinuationStores {
  config: Pick<Config, "continuity">;
  /** Which workspace query a history, a compaction or a tool call continues. */
  threads: ThreadMemory;
  /** The stored responses (on a WebSocket, its own store-less responses first: docs/responses-api.md#websocket-mode). */
  stored: ResponseLookup;
  /** The Conversations API's conversations. */
  conversations: ConversationsApi;
}

/** What a request continues: its resolved input items, the query to continue, and the conversation or response it names. */
export interface Continuation {
  items: StoredInputItem[];
  continueQueryId: string | null;
  /** The Conversations API's conversation it belongs to. */
  conversation: string | null;
  previousResponseId: string | null;
  hints: ThreadHints;
  /** What the workspace is asked: the question, or the tools' results handed back (docs/responses-api.md#a-tools-result-handed-back). */
  prompt: string;
  /** The previous response, when the request names one (what a compaction keeps of it). */
  previous: StoredResponse | null;
}

/** Who asks, where, and what names the thread: a `previous_response_id`, a conversation. */
export interface ContinuationRequest {
  scope: ThreadScope;
  previousResponseId: string | null | undefined;
  conversationId: string | undefined;
}

/**
 * A Responses request's continuation (docs/responses-api.md#continuing-and-storing-responses), in
 * order: the conversation it names, its previous response, an item it references, a compaction it
 * carries, the call whose result it hands back, else the thread its history matches. A named
 * conversation, response, referenced item or compaction that is unknown to this caller is a 404:
 * answering it as a new question would silently drop its context.
 */
export async function continuationOf(
  stores: ContinuationStores,
  request: IncomingMessage,
  asked: ContinuationRequest,
  input: ReadInput,
): Promise<Continuation> {
  const { scope } = asked;
  const { threads, stored, conversations } = stores;
  const conversationId = conversationIdFrom(request.headers, stores.config.continuity.conversationIdHeaders);
  const hints = { conversationId, messages: input.messages };
  const thread = asked.conversationId ? await visibleConversation(conversations, asked.conversationId, scope, "conversation") : null;
  const items = await resolveReferences(stored, input.items, scope);
  const previousId = asked.previousResponseId;
  const previous = previousId ? await visibleResponse(stored, previousId, scope, "previous_response_id") : null;
  const named = thread?.queryId ?? previous?.queryId ?? items.lastReferenced?.queryId;
  const compacted = named ?? (await compactedThread(threads, scope, input.compactions));
  const continueQueryId = compacted ?? (await calledThread(threads, scope, input)) ?? (await threads.find(scope, hints));
  const previousOutput = previous?.value.response.output ?? [];
  let prompt = input.prompt;
  if (input.turn.kind === "tool_results") {
    const calls = new Map<string, KnownCall>([...callsOf(previousOutput), ...input.calls]);
    // Calls made in earlier turns of a conversation are among its items: read only when needed.
    if (thread && input.turn.outputs.some((output) => !calls.has(output.callId))) {
      const earlier = callsOf(await conversations.items(thread.id));
      for (const [callId, call] of earlier) if (!calls.has(callId)) calls.set(callId, call);
    }
    prompt = toolResultsPrompt(input.turn.outputs, calls, input.turn.question, continueQueryId !== null);
  }
  const conversation = thread?.id ?? null;
  const previousResponseId = previous?.id ?? null;
  return { items: items.resolved, continueQueryId, conversation, previousResponseId, hints, prompt, previous };
}

/** The thread the last compaction item names (docs/responses-api.md#compaction); one unknown to this caller is a 404. */
async function compactedThread(threads: ThreadMemory, scope: ThreadScope, contents: readonly string[]): Promise<string | null> {
  const content = contents.at(-1);
  if (content === undefined || content === NO_THREAD) return null;
  const queryId = await threads.findHandle(scope, `compaction:${content}`);
  if (queryId === null) {
    throw new NotFoundError("No compaction with this content was found: it expired, or was made with another key or in another workspace", {
      param: "input",
      code: "item_not_found",
    });
  }
  return queryId;
}

/** The thread that asked for a call whose result the turn hands back (a forced function answered here), if any. */
async function calledThread(threads: ThreadMemory, scope: ThreadScope, input: ReadInput): Promise<string | null> {
  if (input.turn.kind !== "tool_results") return null;
  for (const { callId } of input.turn.outputs) {
    const queryId = callId ? await threads.findHandle(scope, `call:${callId}`) : null;
    if (queryId !== null) return queryId;
  }
  return null;
}
