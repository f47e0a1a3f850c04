import { z } from "zod";
import { ExpiringLru } from "../expiring-lru.js";
import { FallbackStore } from "../fallback-store.js";

/**
 * A stored response as the store keeps it: who may read it, which upstream query it belongs to,
 * the ids of the items it produced (each resolvable to it), and its value, whose shape is its
 * dialect's (the Responses API's object, input, echo and answer: `dialects/responses/stored-value.ts`).
 */
export interface StoredEntry<Value> {
  id: string;
  /** Hash of the credential that created it. */
  principal: string;
  workspace: string;
  /** The upstream query of its chain: a later `previous_response_id` continues it. */
  queryId: string;
  /** Ids of its output items. */
  itemIds: string[];
  value: Value;
}

/**
 * The schema a stored entry is read back from Redis through, its value's given by its dialect: an
 * entry that does not parse is no stored response.
 */
export function storedEntrySchema<Value>(value: z.ZodType<Value>) {
  return z.object({
    id: z.string(),
    principal: z.string(),
    workspace: z.string(),
    queryId: z.string(),
    itemIds: z.array(z.string()),
    value,
  });
}

/** Where stored responses live: in process (bounded, with a TTL) or in Redis (shared by replicas). */
export interface ResponseStore<Value> {
  get(id: string): Promise<StoredEntry<Value> | null>;
  /** The response that produced an output item, by the item's id. */
  findByItem(itemId: string): Promise<StoredEntry<Value> | null>;
  put(entry: StoredEntry<Value>, ttlSeconds: number): Promise<void>;
  /** Whether there was one to delete. */
  delete(id: string): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * The in-process store: bounded in entries (the oldest written of the principal holding the most go
 * first: one key cannot push out everyone's), each with its own expiry, and an index of item ids.
 */
export class MemoryResponseStore<Value> implements ResponseStore<Value> {
  private readonly byItem = new Map<string, string>();
  private readonly entries: ExpiringLru<StoredEntry<Value>>;

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

  async get(id: string): Promise<StoredEntry<Value> | null> {
    return this.entries.get(id) ?? null;
  }

  async findByItem(itemId: string): Promise<StoredEntry<Value> | null> {
    const id = this.byItem.get(itemId);
    return id === undefined ? null : this.get(id);
  }

  async put(entry: StoredEntry<Value>, ttlSeconds: number): Promise<void> {
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
 * Stored responses in a shared store (Redis) with this replica's own memory of the responses it
 * stored behind it (`FallbackStore`): a deletion made through any replica holds whenever Redis
 * answers; deleting needs the shared store.
 */
export function fallbackResponseStore<Value>(
  shared: ResponseStore<Value>,
  local: MemoryResponseStore<Value>,
): ResponseStore<Value> {
  const stores = new FallbackStore<ResponseStore<Value>>(shared, local);
  return {
    get: (id) => stores.read((store) => store.get(id)),
    findByItem: (itemId) => stores.read((store) => store.findByItem(itemId)),
    put: (entry, ttlSeconds) => stores.write((store) => store.put(entry, ttlSeconds)),
    delete: (id) => stores.remove((store) => store.delete(id)),
    close: () => stores.close(),
  };
}
