import type { Redis } from "ioredis";
import { openRedis } from "./redis-connection.js";
import type { ConversationStore } from "./conversation-store.js";

/**
 * Conversations in Redis, so that several adapter replicas continue each other's threads. Keys
 * are namespaced and hold only a hash of the conversation (never a credential or message text);
 * values are query ids with a TTL. Commands fail fast (`openRedis`): a missing Redis means "no match", not a wait.
 */
export class RedisConversationStore implements ConversationStore {
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly namespace = "workspace-openai-adapter:conversation:",
  ) {
    this.redis = openRedis(url);
  }

  async get(key: string): Promise<string | null> {
    return this.redis.get(this.namespace + key);
  }

  async set(key: string, queryId: string, ttlSeconds: number): Promise<void> {
    await this.redis.set(this.namespace + key, queryId, "EX", ttlSeconds);
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
