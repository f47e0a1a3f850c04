import type { Logger } from "pino";
import type { RedisKeys } from "../../redis/keys.js";
import type { RedisGate } from "../../redis/redis-gate.js";
import { RedisScript } from "../../redis/redis-script.js";
import type { Owner } from "../access.js";
import { parseStored } from "../stored-json.js";
import { type QueryOwnerStore, queryOwnerSchema } from "./query-owner-store.js";

/** Sets KEYS[1] to ARGV[1] for ARGV[2] seconds unless it holds another owner; 1 when set. */
const CLAIM = new RedisScript(`
local held = redis.call('GET', KEYS[1])
if held and held ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return 1`);

/**
 * The owners of workspace queries in Redis, so that every replica checks a `query_id` against who
 * started it on any replica. One key per query (`RedisKeys.queryOwner`), holding the owner's JSON
 * (a principal's hash and a workspace: never a credential), with the thread's TTL; read back
 * through `queryOwnerSchema`. A command Redis cannot answer throws `StoreUnavailableError` (through
 * the gate): never "no owner".
 */
export class RedisQueryOwnerStore implements QueryOwnerStore {
  constructor(
    private readonly redis: RedisGate,
    private readonly keys: RedisKeys,
    private readonly logger: Logger,
  ) {}

  async get(queryId: string): Promise<Owner | null> {
    const key = this.keys.queryOwner(queryId);
    const text = await this.redis.run(key, (redis) => redis.get(key));
    return text === null ? null : parseStored(queryOwnerSchema, text, `owner of query ${queryId}`, this.logger);
  }

  async claim(queryId: string, owner: Owner, ttlSeconds: number): Promise<boolean> {
    const key = this.keys.queryOwner(queryId);
    // Written in one field order, so that the script compares owners as text.
    const value = JSON.stringify({ principal: owner.principal, workspace: owner.workspace });
    const claimed = await this.redis.run(key, (redis) => CLAIM.run(redis, [key], [value, String(ttlSeconds)]));
    return claimed === 1;
  }

  // The connection is the adapter's, closed with it.
  async close(): Promise<void> {}
}
