import type { RedisKeys } from "../../redis/keys.js";
import type { RedisGate } from "../../redis/redis-gate.js";
import type { ThreadStore } from "./thread-store.js";

/**
 * The thread memory in Redis, so that several adapter replicas continue each other's threads. Keys
 * (`RedisKeys.thread`) hold only a hash of the history (never a credential or message text);
 * values are query ids with a TTL, plain strings with nothing to parse. A command Redis cannot
 * answer throws `StoreUnavailableError` (through the gate): never "no match".
 */
export class RedisThreadStore implements ThreadStore {
  constructor(
    private readonly redis: RedisGate,
    private readonly keys: RedisKeys,
  ) {}

  get(key: string): Promise<string | null> {
    const name = this.keys.thread(key);
    return this.redis.run(name, (redis) => redis.get(name));
  }

  async set(key: string, queryId: string, ttlSeconds: number): Promise<void> {
    const name = this.keys.thread(key);
    await this.redis.run(name, (redis) => redis.set(name, queryId, "EX", ttlSeconds));
  }

  // The connection is the adapter's, closed with it.
  async close(): Promise<void> {}
}
