import { z } from "zod";
import { storedValueSchema } from "../../dialects/responses/stored-value.js";
import { ExpiringLru } from "../expiring-lru.js";
import { sharedOrLocal } from "../shared-or-local.js";

/**
 * A stored response as the store keeps it: who may read it, which upstream query it belongs to,
 * the ids of the items it produced (resolvable by `item_reference`), and its value (its object,
 * input, echo and answer). Read back from Redis through this schema: an entry that does not parse
 * is no stored response.
 */
export const storedEntrySchema = z.object({
  id: z.string(),
  /** Hash of the credential that created it. */
  principal: z.string(),
  workspace: z.string(),
  /** The upstream query of its chain: a later `previous_response_id` continues it. */
  queryId: z.string(),
  /** Ids of its output items. */
  itemIds: z.array(z.string()),
  value: storedValueSchema,
});
/** A stored response as the store keeps it. */
export type StoredEntry = z.infer<typeof storedEntrySchema>;

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

/**
 * The in-process store: bounded in entries (the oldest written of the principal holding the most go
 * first: one key cannot push out everyone's), each with its own expiry, and an index of item ids.
 */
export class MemoryResponseStore implements ResponseStore {
  private readonly byItem = new Map<string, string>();
  private readonly entries: ExpiringLru<StoredEntry>;

  constructor(maxEntries: number, now: () => number = Date.now) {
    this.entries = new ExpiringLru({
      maxEntries,
      now,
      ownerOf: (entry) => entry.principal,
      onRemove: (id, entry) => {
        for (const itemId of entry.itemIds) if (this.byItem.get(itemId) === id) this.byItem.delete(itemId);
      },
    });
  }

  async get(id: string): Promise<StoredEntry | null> {
    return this.entries.get(id) ?? null;
  }

  async findByItem(itemId: string): Promise<StoredEntry | null> {
    const id = this.byItem.get(itemId);
    return id === undefined ? null : this.get(id);
  }

  async put(entry: StoredEntry, ttlSeconds: number): Promise<void> {
    this.entries.set(entry.id, entry, ttlSeconds);
    // Indexed after the entry went in (an entry it replaced took its own items out of the index).
    for (const itemId of entry.itemIds) this.byItem.set(itemId, entry.id);
  }

  async delete(id: string): Promise<boolean> {
    return this.entries.delete(id);
  }

  async close(): Promise<void> {}
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
