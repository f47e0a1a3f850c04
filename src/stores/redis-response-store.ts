import { execOrThrow } from "./redis-connection.js";
import type { RedisGate } from "./redis-gate.js";
import type { ResponseStore, StoredEntry } from "./response-store.js";

/**
 * Stored responses in Redis, so that every replica reads what any replica stored. One key per
 * response (its JSON, which holds customer text: the answer and its input) and one per output item
 * (the response's id), under the deployment's prefix, all with the store's TTL. A command Redis
 * cannot answer throws `StoreUnavailableError` (through the gate): never "not found".
 */
export class RedisResponseStore implements ResponseStore {
  constructor(
    private readonly redis: RedisGate,
    private readonly prefix: string,
  ) {}

  async get(id: string): Promise<StoredEntry | null> {
    const text = await this.redis.run((redis) => redis.get(`${this.prefix}response:${id}`));
    return text === null ? null : parseEntry(text);
  }

  async findByItem(itemId: string): Promise<StoredEntry | null> {
    const id = await this.redis.run((redis) => redis.get(`${this.prefix}response-item:${itemId}`));
    return id === null ? null : this.get(id);
  }

  async put(entry: StoredEntry, ttlSeconds: number): Promise<void> {
    await this.redis.run(async (redis) => {
      const batch = redis.multi().set(`${this.prefix}response:${entry.id}`, JSON.stringify(entry), "EX", ttlSeconds);
      for (const itemId of entry.itemIds) batch.set(`${this.prefix}response-item:${itemId}`, entry.id, "EX", ttlSeconds);
      await execOrThrow(batch);
    });
  }

  async delete(id: string): Promise<boolean> {
    const entry = await this.get(id);
    if (!entry) return false;
    const keys = [`${this.prefix}response:${id}`, ...entry.itemIds.map((itemId) => `${this.prefix}response-item:${itemId}`)];
    await this.redis.run((redis) => redis.del(...keys));
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
