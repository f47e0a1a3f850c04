/** An item of a conversation as the Conversations API lists it: every item has an id and a type. */
export type ConversationItem = Record<string, unknown> & { id: string; type: string };

/**
 * A conversation of the Conversations API (docs/responses-api.md#conversations): who may see it, its
 * object's fields, and the one workspace query thread its responses continue.
 */
export interface ConversationRecord {
  id: string;
  /** Hash of the credential that created it. */
  principal: string;
  workspace: string;
  createdAt: number;
  metadata: Record<string, string>;
  /** The workspace query its responses continue: chosen when the conversation is made, created upstream by its first response. */
  queryId: string;
}

/**
 * Where conversations and their items live: in process, or in Redis so that any replica reads and
 * continues them. Items keep the order they were added in; a conversation holds at most
 * `maxItems` (the oldest go first), and lives `ttlSeconds` after its last change.
 */
export interface ConversationItemsStore {
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
  expiresAt: number;
}

/** The in-process store: bounded in conversations (the least recently changed go first) and in items per conversation. */
export class MemoryConversationItems implements ConversationItemsStore {
  private readonly held = new Map<string, HeldConversation>();

  constructor(
    private readonly maxConversations: number,
    private readonly maxItems: number,
    private readonly now: () => number = Date.now,
  ) {}

  async create(record: ConversationRecord, items: ConversationItem[], ttlSeconds: number): Promise<void> {
    this.touch(record.id, { record, items: items.slice(-this.maxItems), expiresAt: 0 }, ttlSeconds);
  }

  async get(id: string): Promise<ConversationRecord | null> {
    return this.find(id)?.record ?? null;
  }

  async update(record: ConversationRecord, ttlSeconds: number): Promise<boolean> {
    const held = this.find(record.id);
    if (!held) return false;
    this.touch(record.id, { ...held, record }, ttlSeconds);
    return true;
  }

  async delete(id: string): Promise<boolean> {
    return this.held.delete(id);
  }

  async append(id: string, items: ConversationItem[], ttlSeconds: number): Promise<boolean> {
    const held = this.find(id);
    if (!held) return false;
    this.touch(id, { ...held, items: [...held.items, ...items].slice(-this.maxItems) }, ttlSeconds);
    return true;
  }

  async items(id: string): Promise<ConversationItem[]> {
    return this.find(id)?.items ?? [];
  }

  async deleteItem(id: string, itemId: string): Promise<boolean> {
    const held = this.find(id);
    const index = held?.items.findIndex((item) => item.id === itemId) ?? -1;
    if (!held || index < 0) return false;
    held.items = held.items.filter((_, at) => at !== index);
    return true;
  }

  private touch(id: string, held: HeldConversation, ttlSeconds: number): void {
    this.held.delete(id);
    this.held.set(id, { ...held, expiresAt: this.now() + ttlSeconds * 1000 });
    while (this.held.size > this.maxConversations) this.held.delete(this.held.keys().next().value as string);
  }

  private find(id: string): HeldConversation | undefined {
    const held = this.held.get(id);
    if (held && held.expiresAt <= this.now()) {
      this.held.delete(id);
      return undefined;
    }
    return held;
  }
}
