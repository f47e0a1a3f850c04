import type { Logger } from "pino";
import type { PlainMessage } from "../../core/plain-message.js";
import type { Clock } from "../../util/clock.js";
import { writeBriefly } from "../../util/retry-briefly.js";
import { lookupOrUnavailable } from "../access.js";
import type { StoreWriting } from "../store-writing.js";
import { conversationIdKey, handleKey, historyLookupKey, historyRememberKey, type ThreadScope } from "./thread-keys.js";
import type { ThreadStore } from "./thread-store.js";
import { errorMessage } from "../../util/error-message.js";

/** Values chat UIs send as a conversation id before a conversation has one. */
const PLACEHOLDER_IDS = new Set(["", "new", "null", "undefined", "none"]);

/** What a request says about the thread it belongs to. */
export interface ThreadHints {
  /** A client-given conversation id (header), authoritative when present. */
  conversationId: string | undefined;
  messages: readonly PlainMessage[];
}

/** A finished turn to remember: where its prompt is in the history, the answer sent, the query that gave it. */
export interface ThreadTurn {
  promptIndex: number;
  answer: string;
  queryId: string;
  /** Handles the answer gave out for its thread (`handleKey`): a forced function's `call:<call_id>`. */
  handles?: readonly string[] | undefined;
}

/** What the thread memory needs besides its store (`remember` waits `writeWaitMs` for a turn's first write before the answer ends anyway). */
export interface ThreadMemoryOptions extends StoreWriting {
  ttlSeconds: number;
  logger: Logger;
  clock: Pick<Clock, "setTimeout" | "clearTimeout">;
}

/**
 * The thread memory (docs/architecture.md#conversations): OpenAI chat clients resend the whole
 * history each turn while the workspace keeps a thread under a query id. After a turn this
 * remembers (history + answer) → query id, and a client conversation id → query id; a later
 * request whose history or conversation id matches continues that query. A request that names a
 * thread whose lookup the store cannot answer is refused (503), never answered as a new one
 * (docs/architecture.md#redis-down-or-slow). A turn is written before its answer ends, so that the
 * client's next request, to any replica, finds it; a write that fails is retried briefly in the
 * background, and a turn still not stored is logged with its query id. (Not the Conversations
 * API's conversations: those are `ConversationsApi`.)
 */
export class ThreadMemory {
  constructor(
    private readonly store: ThreadStore,
    private readonly options: ThreadMemoryOptions,
  ) {}

  /** The query id to continue, or null for a new query; a `ContinuationUnavailableError` when the thread cannot be looked up. */
  async find(scope: ThreadScope, hints: ThreadHints): Promise<string | null> {
    const key = hints.conversationId ? conversationIdKey(scope, hints.conversationId) : historyLookupKey(scope, hints.messages);
    if (!key) return null;
    const sign = hints.conversationId ? "its conversation id" : "its history";
    const lookup = { what: `The conversation this request continues (${sign})`, code: "conversation_unavailable", store: "conversation" };
    return lookupOrUnavailable(() => this.store.get(key), lookup, this.options);
  }

  /** The query a handle the adapter gave out names (`handleKey`), or null; a `ContinuationUnavailableError` when the store cannot answer. */
  async findHandle(scope: ThreadScope, handle: string): Promise<string | null> {
    const lookup = { what: "The thread this request's items name", code: "conversation_unavailable", store: "conversation" };
    return lookupOrUnavailable(() => this.store.get(handleKey(scope, handle)), lookup, this.options);
  }

  /** Binds a handle to a query (a compaction's content): resolves as `remember` does. */
  bind(scope: ThreadScope, handle: string, queryId: string): Promise<void> {
    return this.write([handleKey(scope, handle)], queryId);
  }

  /**
   * Remembers a finished turn under its history, its conversation id and its handles, when given.
   * Resolves once the first write has been answered (or after `writeWaitMs`): the caller ends the
   * answer then. A write that failed is retried in the background.
   */
  remember(scope: ThreadScope, hints: ThreadHints, turn: ThreadTurn): Promise<void> {
    const keys = [historyRememberKey(scope, hints.messages, turn.promptIndex, turn.answer)];
    if (hints.conversationId) keys.push(conversationIdKey(scope, hints.conversationId));
    for (const handle of turn.handles ?? []) keys.push(handleKey(scope, handle));
    return this.write(keys, turn.queryId);
  }

  private write(keys: readonly string[], queryId: string): Promise<void> {
    const { ttlSeconds, logger, clock, writeWaitMs, onWrite, wake } = this.options;
    const write = () => Promise.all(keys.map((key) => this.store.set(key, queryId, ttlSeconds))).then(() => undefined);
    return writeBriefly(write, {
      clock,
      wake,
      waitMs: writeWaitMs,
      onOutcome: onWrite,
      onLost: (error) =>
        logger.warn(
          { queryId, err: { message: errorMessage(error) } },
          "conversation turn lost: the store did not take it; its next turn continues only on this replica",
        ),
    });
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

/** The first usable conversation id among the configured headers; placeholders count as none. */
export function conversationIdFrom(
  headers: Record<string, string | string[] | undefined>,
  headerNames: readonly string[],
): string | undefined {
  for (const name of headerNames) {
    const raw = headers[name];
    const value = (Array.isArray(raw) ? raw[0] : raw)?.trim();
    if (value !== undefined && !PLACEHOLDER_IDS.has(value.toLowerCase())) return value;
  }
  return undefined;
}
