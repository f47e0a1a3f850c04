import type { Logger } from "pino";
import type { RedisKeys } from "../../redis/keys.js";
import type { RedisClient } from "../../redis/redis-connection.js";
import type { RedisGate } from "../../redis/redis-gate.js";
import { RedisScript } from "../../redis/redis-script.js";
import { parseStored } from "../stored-json.js";
import {
  type ConversationItem,
  conversationItemSchema,
  type ConversationRecord,
  conversationRecordSchema,
  type ConversationsApiStore,
} from "./conversations-api-store.js";

/** Appends items (ARGV[3..]) when the conversation exists, keeps the last ARGV[2], refreshes the TTL (ARGV[1]). */
const APPEND = new RedisScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
for i = 3, #ARGV do redis.call('RPUSH', KEYS[2], ARGV[i]) end
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[2]), -1)
redis.call('EXPIRE', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[1])
return 1`);

/**
 * The Conversations API's conversations in Redis (docs/responses-api.md#conversations), so that any
 * replica lists and continues what another made. Per conversation, under one hash tag: its record
 * (JSON) and its items (a list, oldest first, each item's JSON: customer text), with the
 * conversations' TTL from the last change. Records and items read back are parsed
 * (`conversationRecordSchema`, `conversationItemSchema`): one that does not parse counts as absent.
 * A command Redis cannot answer throws `StoreUnavailableError`.
 */
export class RedisConversationsApiStore implements ConversationsApiStore {
  constructor(
    private readonly redis: RedisGate,
    /** The deployment's key names: one conversation's keys share its hash tag (`RedisKeys.apiConversation`). */
    private readonly names: RedisKeys,
    private readonly maxItems: number,
    private readonly logger: Logger,
  ) {}

  private keyOf(id: string, part: "record" | "items"): string {
    return this.names.apiConversation(id, part);
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
    return text === null ? null : parseStored(conversationRecordSchema, text, `conversation ${id}`, this.logger);
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
    const appended = await this.on(id, (redis) => APPEND.run(redis, keys, [...limits, ...texts]));
    return appended === 1;
  }

  async items(id: string): Promise<ConversationItem[]> {
    return (await this.itemTexts(id)).flatMap(({ item }) => (item ? [item] : []));
  }

  async deleteItem(id: string, itemId: string): Promise<boolean> {
    const text = (await this.itemTexts(id)).find(({ item }) => item?.id === itemId)?.text;
    if (text === undefined) return false;
    return (await this.on(id, (redis) => redis.lrem(this.keyOf(id, "items"), 1, text))) > 0;
  }

  /** The items' texts as stored, each with its item parsed (null when it does not parse). */
  private async itemTexts(id: string): Promise<{ text: string; item: ConversationItem | null }[]> {
    const texts = await this.on(id, (redis) => redis.lrange(this.keyOf(id, "items"), 0, -1));
    return texts.map((text) => ({ text, item: parseStored(conversationItemSchema, text, `item of conversation ${id}`, this.logger) }));
  }
}
