import { sharedOrLocal } from "./shared-or-local.js";

/** Where conversations are remembered: conversation key → query id, with a time to live. */
export interface ConversationStore {
  get(key: string): Promise<string | null>;
  set(key: string, queryId: string, ttlSeconds: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * The in-process store: an LRU map bounded in entries, each entry with its own expiry. The
 * default for one replica; several replicas share conversations through Redis instead.
 */
export class MemoryConversationStore implements ConversationStore {
  private readonly entries = new Map<string, { queryId: string; expiresAt: number }>();

  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  async get(key: string): Promise<string | null> {
    const entry = this.entries.get(key);
    if (!entry) return null;
    this.entries.delete(key);
    if (entry.expiresAt <= this.now()) return null;
    this.entries.set(key, entry); // most recently used goes last
    return entry.queryId;
  }

  async set(key: string, queryId: string, ttlSeconds: number): Promise<void> {
    this.entries.delete(key);
    this.entries.set(key, { queryId, expiresAt: this.now() + ttlSeconds * 1000 });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  /** Number of entries held (expired ones included until touched or pushed out). */
  get size(): number {
    return this.entries.size;
  }

  async close(): Promise<void> {}
}

/**
 * A shared store (Redis) with this replica's own memory of the turns it answered behind it: writes
 * go to both, lookups ask the shared store and fall back to the replica's memory only when the
 * shared store cannot answer (`sharedOrLocal`). The mapping it holds never changes (a conversation
 * key names one query), so the replica's memory is never stale.
 */
export class FallbackConversationStore implements ConversationStore {
  constructor(
    private readonly shared: ConversationStore,
    private readonly local: MemoryConversationStore,
  ) {}

  get(key: string): Promise<string | null> {
    return sharedOrLocal(
      () => this.shared.get(key),
      () => this.local.get(key),
    );
  }

  async set(key: string, queryId: string, ttlSeconds: number): Promise<void> {
    await this.local.set(key, queryId, ttlSeconds);
    await this.shared.set(key, queryId, ttlSeconds);
  }

  async close(): Promise<void> {
    await Promise.all([this.shared.close(), this.local.close()]);
  }
}
