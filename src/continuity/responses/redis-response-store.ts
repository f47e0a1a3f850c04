import type { Logger } from "pino";
import type { z } from "zod";
import type { RedisKeys } from "../../redis/keys.js";
import type { RedisGate } from "../../redis/redis-gate.js";
import { parseStored } from "../stored-json.js";
import { type ResponseStore, type StoredEntry, storedEntrySchema } from "./response-store.js";

/**
 * Stored responses in Redis, so that every replica reads what any replica stored. One key per
 * response (its JSON, which holds customer text: the answer and its input) and one per output item
 * (the response's id), named by `RedisKeys`, all with the store's TTL. An entry read back is parsed
 * (`storedEntrySchema`, with the value's schema its dialect gives). A command Redis cannot answer
 * throws `StoreUnavailableError` (through the gate): never "not found".
 */
export class RedisResponseStore<Value> implements ResponseStore<Value> {
  private readonly schema: z.ZodType<StoredEntry<Value>>;

  constructor(
    private readonly redis: RedisGate,
    private readonly keys: RedisKeys,
    private readonly logger: Logger,
    /** The schema of a stored response's value (its dialect's). */
    value: z.ZodType<Value>,
  ) {
    this.schema = storedEntrySchema(value);
  }

  async get(id: string): Promise<StoredEntry<Value> | null> {
    const key = this.keys.response(id);
    const text = await this.redis.run(key, (redis) => redis.get(key));
    return text === null ? null : parseStored(this.schema, text, `response ${id}`, this.logger);
  }

  async findByItem(itemId: string): Promise<StoredEntry<Value> | null> {
    const key = this.keys.responseItem(itemId);
    const id = await this.redis.run(key, (redis) => redis.get(key));
    return id === null ? null : this.get(id);
  }

  // One command per key, not a MULTI: in a cluster the keys live in different slots (a response
  // and its items spread over the shards), each through its node's gate. The write is retried whole
  // and ends the answer only once done, so no reader sees half of it.
  async put(entry: StoredEntry<Value>, ttlSeconds: number): Promise<void> {
    const value = JSON.stringify(entry);
    await Promise.all([
      this.setKey(this.keys.response(entry.id), value, ttlSeconds),
      ...entry.itemIds.map((itemId) => this.setKey(this.keys.responseItem(itemId), entry.id, ttlSeconds)),
    ]);
  }

  // An entry that does not parse is deleted too (it is no stored response, and nothing else would
  // remove it before its TTL); its items' keys, unknown then, point at nothing and expire.
  async delete(id: string): Promise<boolean> {
    const key = this.keys.response(id);
    const entry = await this.get(id);
    const items = (entry?.itemIds ?? []).map((itemId) => this.keys.responseItem(itemId));
    const [removed] = await Promise.all([key, ...items].map((name) => this.redis.run(name, (redis) => redis.del(name))));
    return removed === 1;
  }

  private async setKey(key: string, value: string, ttlSeconds: number): Promise<void> {
    await this.redis.run(key, (redis) => redis.set(key, value, "EX", ttlSeconds));
  }

  // The connection is the adapter's, closed with it.
  async close(): Promise<void> {}
}
