import type { Logger } from "pino";
import type { SseFrame } from "../../core/sse-frame.js";
import type { RedisKeys } from "../../redis/keys.js";
import type { RedisClient } from "../../redis/redis-connection.js";
import type { RedisGate } from "../../redis/redis-gate.js";
import { RedisScript } from "../../redis/redis-script.js";
import { parseStored } from "../stored-json.js";
import { type BackgroundRecord, type BackgroundStore, backgroundRecordSchema, loggedFrameSchema } from "./background-store.js";

/** Appends the frames (ARGV[3..]) unless the response ended or another than ARGV[2] holds its lease (KEYS[4]); refreshes the TTL (ARGV[1], seconds). */
const APPEND = new RedisScript(`
if redis.call('EXISTS', KEYS[3]) == 1 or redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local holder = redis.call('GET', KEYS[4])
if holder and holder ~= ARGV[2] then return 0 end
for i = 3, #ARGV do redis.call('RPUSH', KEYS[2], ARGV[i]) end
redis.call('EXPIRE', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[1])
return 1`);

/** Ends the response (ARGV[2] the final record, ARGV[3..] the terminal frames, an unnumbered one numbered here) unless it had ended. */
const END = new RedisScript(`
if redis.call('EXISTS', KEYS[3]) == 1 or redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
for i = 3, #ARGV do
  local frame = string.gsub(ARGV[i], '"sequence_number":%-1', '"sequence_number":' .. redis.call('LLEN', KEYS[2]), 1)
  redis.call('RPUSH', KEYS[2], frame)
end
redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[1])
redis.call('SET', KEYS[3], '1', 'EX', ARGV[1])
return 1`);

/** Takes the lease (KEYS[1]) of a response that exists (KEYS[2]) for ARGV[1] when free or already ARGV[1]'s, for ARGV[2] ms. */
const LEASE = new RedisScript(`
if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`);

/**
 * Background responses in Redis (docs/responses-api.md#background-mode), so that any replica
 * retrieves, follows, resumes and cancels what another started. Per response, under one hash tag
 * (one cluster slot, so that a script touches them together): its record (JSON, with customer
 * text), its event log (a list whose index is the frame's `sequence_number`; each entry the frame's
 * data, whose `type` is its event name), an "ended" marker, and the lease of the replica running
 * it, all with the responses' TTL. Records and frames read back are parsed (`backgroundRecordSchema`,
 * `loggedFrameSchema`): one that does not parse counts as absent. A command Redis cannot answer
 * throws `StoreUnavailableError`.
 */
export class RedisBackgroundStore implements BackgroundStore {
  constructor(
    private readonly redis: RedisGate,
    /** The deployment's key names: one response's keys share its hash tag (`RedisKeys.background`). */
    private readonly names: RedisKeys,
    private readonly logger: Logger,
  ) {}

  private keyOf(id: string, part: "record" | "events" | "ended" | "lease"): string {
    return this.names.background(id, part);
  }

  /** A command on one response's keys, through the gate of the node that holds them (one slot). */
  private on<T>(id: string, command: (redis: RedisClient) => Promise<T>): Promise<T> {
    return this.redis.run(this.keyOf(id, "record"), command);
  }

  private keys(id: string): [string, string, string] {
    return [this.keyOf(id, "record"), this.keyOf(id, "events"), this.keyOf(id, "ended")];
  }

  async create(record: BackgroundRecord, ttlSeconds: number): Promise<void> {
    const [recordKey, events, ended] = this.keys(record.id);
    await this.on(record.id, async (redis) => {
      await redis.del(events, ended);
      await redis.set(recordKey, JSON.stringify(record), "EX", ttlSeconds);
    });
  }

  async get(id: string): Promise<BackgroundRecord | null> {
    const text = await this.on(id, (redis) => redis.get(this.keyOf(id, "record")));
    return text === null ? null : parseStored(backgroundRecordSchema, text, `background response ${id}`, this.logger);
  }

  // An append of no frames runs the same script: it is refused as any append is (the response
  // ended, or another replica holds its lease), and refreshes the time to live as one.
  async append(id: string, frames: SseFrame[], ttlSeconds: number, owner: string): Promise<boolean> {
    const texts = frames.map((frame) => JSON.stringify(frame.data));
    const keys = [...this.keys(id), this.keyOf(id, "lease")];
    const done = await this.on(id, (redis) => APPEND.run(redis, keys, [String(ttlSeconds), owner, ...texts]));
    return done === 1;
  }

  async end(id: string, response: BackgroundRecord["response"], frames: SseFrame[], ttlSeconds: number): Promise<boolean> {
    const record = await this.get(id);
    if (!record) return false;
    const texts = frames.map((frame) => JSON.stringify(frame.data));
    const final = JSON.stringify({ ...record, response });
    const done = await this.on(id, (redis) => END.run(redis, this.keys(id), [String(ttlSeconds), final, ...texts]));
    return done === 1;
  }

  async size(id: string): Promise<number> {
    return this.on(id, (redis) => redis.llen(this.keyOf(id, "events")));
  }

  async events(id: string, after: number): Promise<SseFrame[]> {
    const texts = await this.on(id, (redis) => redis.lrange(this.keyOf(id, "events"), Math.max(0, after + 1), -1));
    const frames: SseFrame[] = [];
    for (const text of texts) {
      const data = parseStored(loggedFrameSchema, text, `event of background response ${id}`, this.logger);
      if (data) frames.push({ event: data.type, data });
    }
    return frames;
  }

  async ended(id: string): Promise<boolean> {
    const [record, ended] = await this.on(id, (redis) => Promise.all([redis.exists(this.keyOf(id, "record")), redis.exists(this.keyOf(id, "ended"))]));
    return record === 0 || ended === 1;
  }

  async lease(id: string, owner: string, ms: number): Promise<boolean> {
    const taken = await this.on(id, (redis) => LEASE.run(redis, [this.keyOf(id, "lease"), this.keyOf(id, "record")], [owner, String(ms)]));
    return taken === 1;
  }

  async delete(id: string): Promise<boolean> {
    const removed = await this.on(id, (redis) => redis.del(...this.keys(id), this.keyOf(id, "lease")));
    return removed > 0;
  }
}
