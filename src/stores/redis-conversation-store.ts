import { Redis } from "ioredis";
import type { ConversationStore } from "./conversation-store.js";

/**
 * Conversations in Redis, so that several adapter replicas continue each other's threads. Keys
 * are namespaced and hold only a hash of the conversation (never a credential or message text);
 * values are query ids with a TTL. Commands fail fast: a missing Redis means "no match", not a hang.
 */
export class RedisConversationStore implements ConversationStore {
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly namespace = "workspace-openai-adapter:conversation:",
  ) {
    this.redis = new Redis(url, {
      lazyConnect: false,
      maxRetriesPerRequest: 1,
      commandTimeout: 1000,
      enableOfflineQueue: true,
      connectTimeout: 2000,
    });
    // Connection errors surface on the commands that need the connection; logging them here
    // as well would repeat them for every reconnect attempt.
    this.redis.on("error", () => undefined);
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
