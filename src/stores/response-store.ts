import { sharedOrLocal } from "./shared-or-local.js";

/**
 * A stored response as the store sees it: who may read it, which upstream query it belongs to, the
 * ids of the items it produced (resolvable by `item_reference`), and the rest as JSON the Responses
 * dialect reads back.
 */
export interface StoredEntry {
  id: string;
  /** Hash of the credential that created it. */
  principal: string;
  workspace: string;
  /** The upstream query of its chain: a later `previous_response_id` continues it. */
  queryId: string;
  /** Ids of its output items. */
  itemIds: string[];
  value: unknown;
}

/** Where stored responses live: in process (bounded, with a TTL) or in Redis (shared by replicas). */
export interface ResponseStore {
  get(id: string): Promise<StoredEntry | null>;
  /** The response that produced an output item, by the item's id. */
  findByItem(itemId: string): Promise<StoredEntry | null>;
  put(entry: StoredEntry, ttlSeconds: number): Promise<void>;
  /** Whether there was one to delete. */
  delete(id: string): Promise<boolean>;
  close(): Promise<void>;
}

/** The in-process store: an LRU bounded in entries, each with its own expiry. */
export class MemoryResponseStore implements ResponseStore {
  private readonly entries = new Map<string, { entry: StoredEntry; expiresAt: number }>();
  private readonly byItem = new Map<string, string>();

  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  async get(id: string): Promise<StoredEntry | null> {
    const held = this.entries.get(id);
    if (!held) return null;
    if (held.expiresAt <= this.now()) {
      this.remove(id);
      return null;
    }
    return held.entry;
  }

  async findByItem(itemId: string): Promise<StoredEntry | null> {
    const id = this.byItem.get(itemId);
    return id === undefined ? null : this.get(id);
  }

  async put(entry: StoredEntry, ttlSeconds: number): Promise<void> {
    this.remove(entry.id);
    this.entries.set(entry.id, { entry, expiresAt: this.now() + ttlSeconds * 1000 });
    for (const itemId of entry.itemIds) this.byItem.set(itemId, entry.id);
    while (this.entries.size > this.maxEntries) this.remove(this.entries.keys().next().value as string);
  }

  async delete(id: string): Promise<boolean> {
    return this.remove(id);
  }

  async close(): Promise<void> {}

  private remove(id: string): boolean {
    const held = this.entries.get(id);
    if (!held) return false;
    this.entries.delete(id);
    for (const itemId of held.entry.itemIds) if (this.byItem.get(itemId) === id) this.byItem.delete(itemId);
    return true;
  }
}

/**
 * A shared store (Redis) with this replica's own memory of the responses it stored behind it:
 * writes go to both; reads ask the shared store, and the replica's memory only when the shared store
 * cannot answer (`sharedOrLocal`), so a deletion made through any replica holds whenever Redis
 * answers. Deleting needs the shared store.
 */
export class FallbackResponseStore implements ResponseStore {
  constructor(
    private readonly shared: ResponseStore,
    private readonly local: MemoryResponseStore,
  ) {}

  get(id: string): Promise<StoredEntry | null> {
    return sharedOrLocal(
      () => this.shared.get(id),
      () => this.local.get(id),
    );
  }

  findByItem(itemId: string): Promise<StoredEntry | null> {
    return sharedOrLocal(
      () => this.shared.findByItem(itemId),
      () => this.local.findByItem(itemId),
    );
  }

  async put(entry: StoredEntry, ttlSeconds: number): Promise<void> {
    await this.local.put(entry, ttlSeconds);
    await this.shared.put(entry, ttlSeconds);
  }

  async delete(id: string): Promise<boolean> {
    const deleted = await this.shared.delete(id);
    await this.local.delete(id);
    return deleted;
  }

  async close(): Promise<void> {
    await Promise.all([this.shared.close(), this.local.close()]);
  }
}
