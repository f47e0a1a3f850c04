import type { Logger } from "pino";
import type { PlainMessage } from "../core/plain-message.js";
import { ContinuationUnavailableError } from "../errors/adapter-error.js";
import {
  type ConversationScope,
  conversationIdKey,
  historyLookupKey,
  historyRememberKey,
} from "./conversation-keys.js";
import type { ConversationStore } from "../stores/conversation-store.js";
import type { Clock } from "../util/clock.js";
import { type RetryOutcome, writeBriefly } from "../util/retry-briefly.js";

/** Values chat UIs send as a conversation id before a conversation has one. */
const PLACEHOLDER_IDS = new Set(["", "new", "null", "undefined", "none"]);

/** What a request says about the conversation it belongs to. */
export interface ConversationHints {
  /** A client-given conversation id (header), authoritative when present. */
  conversationId: string | undefined;
  messages: readonly PlainMessage[];
}

/** What conversations need besides their store. */
export interface ConversationsOptions {
  ttlSeconds: number;
  logger: Logger;
  clock: Pick<Clock, "setTimeout" | "clearTimeout">;
  /** How long `remember` waits for a turn's first write before the answer ends anyway; unset for a store in process (it answers at once). */
  writeWaitMs?: number | undefined;
  /** How each turn's write went (metrics). */
  onRemembered?: (outcome: RetryOutcome) => void;
  /** A continuation was refused because the store could not answer (metrics). */
  onRefused?: () => void;
  /** Resolves when the store answers again after an outage: a failed write's cue to retry at once. */
  storeAnswersAgain?: () => Promise<void>;
}

/**
 * Conversation continuity (docs/architecture.md#conversations): OpenAI clients resend the whole
 * history each turn while the workspace keeps a thread under a query id. After a turn this
 * remembers (history + answer) → query id, and a client conversation id → query id; a later
 * request whose history or conversation id matches continues that query. A request that names a
 * conversation whose lookup the store cannot answer is refused (503), never answered as a new
 * conversation (docs/architecture.md#redis-down-or-slow). A turn is written before its answer ends,
 * so that the client's next request, to any replica, finds it; a write that fails is retried
 * briefly in the background, and a turn still not stored is logged with its query id.
 */
export class Conversations {
  constructor(
    private readonly store: ConversationStore,
    private readonly options: ConversationsOptions,
  ) {}

  /** The query id to continue, or null for a new query; a `ContinuationUnavailableError` when the conversation cannot be looked up. */
  async find(scope: ConversationScope, hints: ConversationHints): Promise<string | null> {
    const key = hints.conversationId
      ? conversationIdKey(scope, hints.conversationId)
      : historyLookupKey(scope, hints.messages);
    if (!key) return null;
    try {
      return await this.store.get(key);
    } catch (error) {
      this.options.logger.warn({ err: { message: (error as Error).message } }, "conversation lookup failed: the request is refused");
      this.options.onRefused?.();
      const sign = hints.conversationId ? "its conversation id" : "its history";
      throw new ContinuationUnavailableError(`The conversation this request continues (${sign})`, "conversation_unavailable", error);
    }
  }

  /**
   * Remembers a finished turn under its history and, when given, its conversation id. Resolves once
   * the first write has been answered (or after `writeWaitMs`): the caller ends the answer then.
   * A write that failed is retried in the background.
   */
  remember(
    scope: ConversationScope,
    hints: ConversationHints,
    turn: { promptIndex: number; answer: string; queryId: string },
  ): Promise<void> {
    const keys = [historyRememberKey(scope, hints.messages, turn.promptIndex, turn.answer)];
    if (hints.conversationId) keys.push(conversationIdKey(scope, hints.conversationId));
    const { ttlSeconds, logger, clock, writeWaitMs, onRemembered, storeAnswersAgain } = this.options;
    const write = () => Promise.all(keys.map((key) => this.store.set(key, turn.queryId, ttlSeconds))).then(() => undefined);
    return writeBriefly(write, {
      clock,
      wake: storeAnswersAgain,
      waitMs: writeWaitMs,
      onOutcome: onRemembered,
      onLost: (error) =>
        logger.warn(
          { queryId: turn.queryId, err: { message: (error as Error).message } },
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
