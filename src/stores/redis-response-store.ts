import type { RedisKeys } from "../redis/keys.js";
import type { RedisGate } from "../redis/redis-gate.js";
import type { ResponseStore, StoredEntry } from "./response-store.js";

/**
 * Stored responses in Redis, so that every replica reads what any replica stored. One key per
 * response (its JSON, which holds customer text: the answer and its input) and one per output item
 * (the response's id), named by `RedisKeys`, all with the store's TTL. A command Redis
 * cannot answer throws `StoreUnavailableError` (through the gate): never "not found".
 */
export class RedisResponseStore implements ResponseStore {
  constructor(
    private readonly redis: RedisGate,
    private readonly keys: RedisKeys,
  ) {}

  async get(id: string): Promise<StoredEntry | null> {
    const text = await this.redis.run((redis) => redis.get(this.keys.response(id)));
    return text === null ? null : parseEntry(text);
  }

  async findByItem(itemId: string): Promise<StoredEntry | null> {
    const id = await this.redis.run((redis) => redis.get(this.keys.responseItem(itemId)));
    return id === null ? null : this.get(id);
  }

  // One command per key, not a MULTI: in a cluster the keys live in different slots (a response
  // and its items spread over the shards). The write is retried whole and ends the answer only once
  // done, so no reader sees half of it.
  async put(entry: StoredEntry, ttlSeconds: number): Promise<void> {
    await this.redis.run((redis) =>
      Promise.all([
        redis.set(this.keys.response(entry.id), JSON.stringify(entry), "EX", ttlSeconds),
        ...entry.itemIds.map((itemId) => redis.set(this.keys.responseItem(itemId), entry.id, "EX", ttlSeconds)),
      ]),
    );
  }

  async delete(id: string): Promise<boolean> {
    const entry = await this.get(id);
    if (!entry) return false;
    const keys = [this.keys.response(id), ...entry.itemIds.map((itemId) => this.keys.responseItem(itemId))];
    await this.redis.run((redis) => Promise.all(keys.map((key) => redis.del(key))));
    return true;
  }

  // The connection is the adapter's, closed with it.
  async close(): Promise<void> {}
}

/** A stored entry read back; anything unreadable counts as absent. */
function parseEntry(text: string): StoredEntry | null {
  try {
    const value = JSON.parse(text) as Partial<StoredEntry>;
    const valid =
      typeof value.id === "string" &&
      typeof value.principal === "string" &&
      typeof value.workspace === "string" &&
      typeof value.queryId === "string" &&
      Array.isArray(value.itemIds);
    return valid ? (value as StoredEntry) : null;
  } catch {
    return null;
  }
}
