import type { RedisKeys } from "../redis/keys.js";
import type { RedisClient } from "../redis/redis-connection.js";
import type { RedisGate } from "../redis/redis-gate.js";
import type { OAuthStorage } from "./oauth-storage.js";

/**
 * The authorization server's storage in Redis (with `REDIS_URL`): what one replica issues (a
 * client, a code, a token, a grant's sealed key) another redeems, and a revocation on one holds
 * on all. Keys are the storage's own (`RedisKeys.oauth`: hashes of token values, never the tokens);
 * each command is single-key, so it works on a cluster too. A command Redis cannot answer
 * throws (through the gate): a token is then not honoured rather than honoured unchecked.
 */
export class RedisOAuthStorage implements OAuthStorage {
  constructor(
    private readonly redis: RedisGate,
    private readonly keys: RedisKeys,
  ) {}

  /** A command on one key (given its full name), through the gate of the node that holds it. */
  private on<T>(key: string, command: (name: string) => (redis: RedisClient) => Promise<T>): Promise<T> {
    const name = this.keys.oauth(key);
    return this.redis.run(name, command(name));
  }

  get(key: string): Promise<string | undefined> {
    return this.on(key, (name) => async (redis) => (await redis.get(name)) ?? undefined);
  }

  async set(key: string, value: string, ttlSeconds?: number): Promise<void> {
    await this.on(key, (name) => (redis) => (ttlSeconds === undefined ? redis.set(name, value) : redis.set(name, value, "EX", ttlSeconds)));
  }

  async setIfAbsent(key: string, value: string, ttlSeconds?: number): Promise<boolean> {
    const reply = await this.on(key, (name) => (redis) =>
      ttlSeconds === undefined ? redis.set(name, value, "NX") : redis.set(name, value, "EX", ttlSeconds, "NX"),
    );
    return reply === "OK";
  }

  async delete(keys: string[]): Promise<void> {
    await Promise.all(keys.map((key) => this.on(key, (name) => (redis) => redis.del(name))));
  }

  async addMember(key: string, member: string, ttlSeconds?: number): Promise<void> {
    await this.on(key, (full) => async (redis) => {
      await redis.sadd(full, member);
      if (ttlSeconds === undefined) return;
      // The set lives as long as its longest-lived member: NX gives a new set its expiry, GT only extends it.
      await redis.expire(full, ttlSeconds, "NX");
      await redis.expire(full, ttlSeconds, "GT");
    });
  }

  members(key: string): Promise<string[]> {
    return this.on(key, (name) => (redis) => redis.smembers(name));
  }
}
