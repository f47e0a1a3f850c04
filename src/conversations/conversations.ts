import type { Logger } from "pino";
import type { PlainMessage } from "../core/plain-message.js";
import {
  type ConversationScope,
  conversationIdKey,
  historyLookupKey,
  historyRememberKey,
} from "./conversation-keys.js";
import type { ConversationStore } from "../stores/conversation-store.js";

/** Values chat UIs send as a conversation id before a conversation has one. */
const PLACEHOLDER_IDS = new Set(["", "new", "null", "undefined", "none"]);

/** What a request says about the conversation it belongs to. */
export interface ConversationHints {
  /** A client-given conversation id (header), authoritative when present. */
  conversationId: string | undefined;
  messages: readonly PlainMessage[];
}

/**
 * Conversation continuity (docs/architecture.md#conversations): OpenAI clients resend the whole
 * history each turn while the workspace keeps a thread under a query id. After a turn this
 * remembers (history + answer) → query id, and a client conversation id → query id; a later
 * request whose history or conversation id matches continues that query. The store failing is
 * never the request failing: a lookup that fails is "no match", a write that fails is logged.
 */
export class Conversations {
  constructor(
    private readonly store: ConversationStore,
    private readonly options: { ttlSeconds: number; logger: Logger },
  ) {}

  /** The query id to continue, or null for a new query. */
  async find(scope: ConversationScope, hints: ConversationHints): Promise<string | null> {
    const key = hints.conversationId
      ? conversationIdKey(scope, hints.conversationId)
      : historyLookupKey(scope, hints.messages);
    if (!key) return null;
    try {
      return await this.store.get(key);
    } catch (error) {
      this.options.logger.warn({ err: { message: (error as Error).message } }, "conversation lookup failed");
      return null;
    }
  }

  /** Remembers a finished turn under its history and, when given, its conversation id. */
  async remember(
    scope: ConversationScope,
    hints: ConversationHints,
    turn: { promptIndex: number; answer: string; queryId: string },
  ): Promise<void> {
    const keys = [historyRememberKey(scope, hints.messages, turn.promptIndex, turn.answer)];
    if (hints.conversationId) keys.push(conversationIdKey(scope, hints.conversationId));
    try {
      await Promise.all(keys.map((key) => this.store.set(key, turn.queryId, this.options.ttlSeconds)));
    } catch (error) {
      this.options.logger.warn({ err: { message: (error as Error).message } }, "conversation could not be remembered");
    }
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
