import type { RedisKeys } from "../redis/keys.js";
import type { RedisClient } from "../redis/redis-connection.js";
import type { RedisGate } from "../redis/redis-gate.js";
import type { ConversationItem, ConversationItemsStore, ConversationRecord } from "./conversation-items.js";

/** Appends items (ARGV[3..]) when the conversation exists, keeps the last ARGV[2], refreshes the TTL (ARGV[1]). */
const APPEND = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
for i = 3, #ARGV do redis.call('RPUSH', KEYS[2], ARGV[i]) end
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[2]), -1)
redis.call('EXPIRE', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[1])
return 1`;

/**
 * Conversations in Redis (docs/responses-api.md#conversations), so that any replica lists and
 * continues what another made. Per conversation, under one hash tag: its record (JSON) and its items
 * (a list, oldest first, each item's JSON: customer text), with the conversations' TTL from the last
 * change. A command Redis cannot answer throws `StoreUnavailableError`.
 */
export class RedisConversationItems implements ConversationItemsStore {
  constructor(
    private readonly redis: RedisGate,
    /** The deployment's key names: one conversation's keys share its hash tag (`RedisKeys.conversationItems`). */
    private readonly names: RedisKeys,
    private readonly maxItems: number,
  ) {}

  private keyOf(id: string, part: "record" | "items"): string {
    return this.names.conversationItems(id, part);
  }

  /** A command on one conversation's keys, through the gate of the node that holds them (one slot). */
  private on<T>(id: string, command: (redis: RedisClient) => Promise<T>): Promise<T> {
    return this.redis.run(this.keyOf(id, "record"), command);
  }

  async create(record: ConversationRecord, items: ConversationItem[], ttlSeconds: number): Promise<void> {
    const [recordKey, itemsKey] = [this.keyOf(record.id, "record"), this.keyOf(record.id, "items")];
    await this.on(record.id, async (redis) => {
      await redis.set(recordKey, JSON.stringify(record), "EX", ttlSeconds);
      await redis.del(itemsKey);
    });
    if (items.length > 0) await this.append(record.id, items, ttlSeconds);
  }

  async get(id: string): Promise<ConversationRecord | null> {
    const text = await this.on(id, (redis) => redis.get(this.keyOf(id, "record")));
    return text === null ? null : parseRecord(text);
  }

  async update(record: ConversationRecord, ttlSeconds: number): Promise<boolean> {
    const done = await this.on(record.id, (redis) => redis.set(this.keyOf(record.id, "record"), JSON.stringify(record), "EX", ttlSeconds, "XX"));
    if (done !== "OK") return false;
    await this.on(record.id, (redis) => redis.expire(this.keyOf(record.id, "items"), ttlSeconds));
    return true;
  }

  async delete(id: string): Promise<boolean> {
    return (await this.on(id, (redis) => redis.del(this.keyOf(id, "record"), this.keyOf(id, "items")))) > 0;
  }

  async append(id: string, items: ConversationItem[], ttlSeconds: number): Promise<boolean> {
    const texts = items.map((item) => JSON.stringify(item));
    const keys = [this.keyOf(id, "record"), this.keyOf(id, "items")];
    const limits = [String(ttlSeconds), String(this.maxItems)];
    const appended = await this.on(id, (redis) => redis.eval(APPEND, 2, ...keys, ...limits, ...texts));
    return appended === 1;
  }

  async items(id: string): Promise<ConversationItem[]> {
    const texts = await this.on(id, (redis) => redis.lrange(this.keyOf(id, "items"), 0, -1));
    return texts.map((text) => JSON.parse(text) as ConversationItem);
  }

  async deleteItem(id: string, itemId: string): Promise<boolean> {
    const text = (await this.on(id, (redis) => redis.lrange(this.keyOf(id, "items"), 0, -1))).find(
      (entry) => (JSON.parse(entry) as ConversationItem).id === itemId,
    );
    if (text === undefined) return false;
    return (await this.on(id, (redis) => redis.lrem(this.keyOf(id, "items"), 1, text))) > 0;
  }
}

/** A record read back; anything unreadable counts as absent. */
function parseRecord(text: string): ConversationRecord | null {
  try {
    const value = JSON.parse(text) as Partial<ConversationRecord>;
    const fields = [value.id, value.principal, value.workspace, value.queryId];
    return fields.every((field) => typeof field === "string") ? (value as ConversationRecord) : null;
  } catch {
    return null;
  }
}
