import type { Redis } from "ioredis";
import { openRedis } from "./redis-connection.js";
import type { ResponseStore, StoredEntry } from "./response-store.js";

/**
 * Stored responses in Redis, so that every replica reads what any replica stored. One key per
 * response (its JSON, which holds customer text: the answer and its input) and one per output item
 * (the response's id), under the deployment's prefix, all with the store's TTL. Fails fast
 * (`openRedis`): Redis down means "not found" and "not stored", logged by the caller.
 */
export class RedisResponseStore implements ResponseStore {
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly prefix: string,
  ) {
    this.redis = openRedis(url);
  }

  async get(id: string): Promise<StoredEntry | null> {
    const text = await this.redis.get(`${this.prefix}response:${id}`);
    return text === null ? null : parseEntry(text);
  }

  async findByItem(itemId: string): Promise<StoredEntry | null> {
    const id = await this.redis.get(`${this.prefix}response-item:${itemId}`);
    return id === null ? null : this.get(id);
  }

  async put(entry: StoredEntry, ttlSeconds: number): Promise<void> {
    const batch = this.redis.multi().set(`${this.prefix}response:${entry.id}`, JSON.stringify(entry), "EX", ttlSeconds);
    for (const itemId of entry.itemIds) batch.set(`${this.prefix}response-item:${itemId}`, entry.id, "EX", ttlSeconds);
    await batch.exec();
  }

  async delete(id: string): Promise<boolean> {
    const entry = await this.get(id);
    if (!entry) return false;
    await this.redis.del(`${this.prefix}response:${id}`, ...entry.itemIds.map((itemId) => `${this.prefix}response-item:${itemId}`));
    return true;
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
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
