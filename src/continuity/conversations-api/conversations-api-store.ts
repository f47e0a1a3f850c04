import { z } from "zod";
import { ExpiringLru } from "../expiring-lru.js";

/** An item of a conversation as the Conversations API lists it: every item has an id and a type. Read back through this schema. */
export const conversationItemSchema = z.looseObject({ id: z.string(), type: z.string() });
/** An item of a conversation. */
export type ConversationItem = z.infer<typeof conversationItemSchema>;

/**
 * A conversation of the Conversations API (docs/responses-api.md#conversations): who may see it, its
 * object's fields, and the one workspace query thread its responses continue. Read back from Redis
 * through this schema.
 */
export const conversationRecordSchema = z.object({
  id: z.string(),
  /** Hash of the credential that created it. */
  principal: z.string(),
  workspace: z.string(),
  createdAt: z.int(),
  metadata: z.record(z.string(), z.string()),
  /** The workspace query its responses continue: chosen when the conversation is made, created upstream by its first response. */
  queryId: z.string(),
});
/** A conversation of the Conversations API. */
export type ConversationRecord = z.infer<typeof conversationRecordSchema>;

/**
 * Where the Conversations API's conversations and their items live: in process, or in Redis so
 * that any replica reads and continues them. Items keep the order they were added in; a
 * conversation holds at most `maxItems` (the oldest go first), and lives `ttlSeconds` after its
 * last change. (Not the thread memory of chat histories: that is `ThreadStore`.)
 */
export interface ConversationsApiStore {
  create(record: ConversationRecord, items: ConversationItem[], ttlSeconds: number): Promise<void>;
  get(id: string): Promise<ConversationRecord | null>;
  /** Replaces the record (its metadata); false when there is none. */
  update(record: ConversationRecord, ttlSeconds: number): Promise<boolean>;
  delete(id: string): Promise<boolean>;
  /** Appends items; false when the conversation is gone. */
  append(id: string, items: ConversationItem[], ttlSeconds: number): Promise<boolean>;
  /** Every item, oldest first. */
  items(id: string): Promise<ConversationItem[]>;
  deleteItem(id: string, itemId: string): Promise<boolean>;
}

interface HeldConversation {
  record: ConversationRecord;
  items: ConversationItem[];
}

/**
 * The in-process store: bounded in conversations (the least recently changed of the principal
 * holding the most go first) and in items per conversation.
 */
export class MemoryConversationsApiStore implements ConversationsApiStore {
  private readonly held: ExpiringLru<HeldConversation>;

  constructor(
    maxConversations: number,
    private readonly maxItems: number,
    now: () => number = Date.now,
  ) {
    this.held = new ExpiringLru({ maxEntries: maxConversations, now, ownerOf: (held) => held.record.principal });
  }

  async create(record: ConversationRecord, items: ConversationItem[], ttlSeconds: number): Promise<void> {
    this.held.set(record.id, { record, items: items.slice(-this.maxItems) }, ttlSeconds);
  }

  async get(id: string): Promise<ConversationRecord | null> {
    return this.held.get(id)?.record ?? null;
  }

  async update(record: ConversationRecord, ttlSeconds: number): Promise<boolean> {
    const held = this.held.get(record.id);
    if (!held) return false;
    this.held.set(record.id, { ...held, record }, ttlSeconds);
    return true;
  }

  async delete(id: string): Promise<boolean> {
    return this.held.delete(id);
  }

  async append(id: string, items: ConversationItem[], ttlSeconds: number): Promise<boolean> {
    const held = this.held.get(id);
    if (!held) return false;
    this.held.set(id, { ...held, items: [...held.items, ...items].slice(-this.maxItems) }, ttlSeconds);
    return true;
  }

  async items(id: string): Promise<ConversationItem[]> {
    return this.held.get(id)?.items ?? [];
  }

  async deleteItem(id: string, itemId: string): Promise<boolean> {
    const held = this.held.get(id);
    const index = held?.items.findIndex((item) => item.id === itemId) ?? -1;
    if (!held || index < 0) return false;
    held.items = held.items.filter((_, at) => at !== index);
    return true;
  }
}
