import type { RedisGate } from "../stores/redis-gate.js";
import type { OAuthStorage } from "./oauth-storage.js";

/**
 * The authorization server's storage in Redis (with `REDIS_URL`): what one replica issues (a
 * client, a code, a token, a grant's sealed key) another redeems, and a revocation on one holds
 * on all. Keys are the storage's own under `prefix` (hashes of token values, never the tokens);
 * each command is single-key, so it works on a cluster too. A command Redis cannot answer
 * throws (through the gate): a token is then not honoured rather than honoured unchecked.
 */
export class RedisOAuthStorage implements OAuthStorage {
  constructor(
    private readonly redis: RedisGate,
    private readonly prefix: string,
  ) {}

  get(key: string): Promise<string | undefined> {
    return this.redis.run(async (redis) => (await redis.get(this.prefix + key)) ?? undefined);
  }

  async set(key: string, value: string, ttlSeconds?: number): Promise<void> {
    await this.redis.run((redis) => (ttlSeconds === undefined ? redis.set(this.prefix + key, value) : redis.set(this.prefix + key, value, "EX", ttlSeconds)));
  }

  async setIfAbsent(key: string, value: string, ttlSeconds?: number): Promise<boolean> {
    const reply = await this.redis.run((redis) =>
      ttlSeconds === undefined ? redis.set(this.prefix + key, value, "NX") : redis.set(this.prefix + key, value, "EX", ttlSeconds, "NX"),
    );
    return reply === "OK";
  }

  async delete(keys: string[]): Promise<void> {
    await Promise.all(keys.map((key) => this.redis.run((redis) => redis.del(this.prefix + key))));
  }

  async addMember(key: string, member: string, ttlSeconds?: number): Promise<void> {
    const full = this.prefix + key;
    await this.redis.run(async (redis) => {
      await redis.sadd(full, member);
      if (ttlSeconds === undefined) return;
      // The set lives as long as its longest-lived member: NX gives a new set its expiry, GT only extends it.
      await redis.expire(full, ttlSeconds, "NX");
      await redis.expire(full, ttlSeconds, "GT");
    });
  }

  members(key: string): Promise<string[]> {
    return this.redis.run((redis) => redis.smembers(this.prefix + key));
  }
}
