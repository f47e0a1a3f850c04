import type { Clock } from "../util/clock.js";

/**
 * What the authorization server keeps (clients, grants, codes, tokens, sealed keys): a few
 * key-value operations with expiry, in process or in Redis (`RedisOAuthStorage`) so that any
 * replica honours any token. Values are JSON text.
 */
export interface OAuthStorage {
  get(key: string): Promise<string | undefined>;
  /** Sets a value that expires after `ttlSeconds` (none: kept until deleted). */
  set(key: string, value: string, ttlSeconds?: number): Promise<void>;
  /** Sets a value only if the key holds none: true if it was set (one-time use of a code, atomically). */
  setIfAbsent(key: string, value: string, ttlSeconds?: number): Promise<boolean>;
  delete(keys: string[]): Promise<void>;
  /** Adds a member to a set (the keys of one grant's tokens), extending its life to at least `ttlSeconds`. */
  addMember(key: string, member: string, ttlSeconds?: number): Promise<void>;
  members(key: string): Promise<string[]>;
}

interface Entry {
  value: string | Set<string>;
  expiresAt: number;
}

/**
 * The in-process storage (no Redis): bounded, each entry dropped at its expiry (looked at when
 * read, swept as entries are written). Grants end with the process.
 */
export class MemoryOAuthStorage implements OAuthStorage {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly clock: Clock,
    private readonly maxEntries = 100_000,
  ) {}

  private live(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt <= this.clock.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  private put(key: string, value: Entry["value"], ttlSeconds: number | undefined): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.sweep();
    this.entries.set(key, { value, expiresAt: ttlSeconds === undefined ? Infinity : this.clock.now() + ttlSeconds * 1000 });
  }

  /** Drops what expired, then the oldest entries while still full. */
  private sweep(): void {
    const now = this.clock.now();
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
    for (const key of this.entries.keys()) {
      if (this.entries.size < this.maxEntries) break;
      this.entries.delete(key);
    }
  }

  async get(key: string): Promise<string | undefined> {
    const value = this.live(key)?.value;
    return typeof value === "string" ? value : undefined;
  }

  async set(key: string, value: string, ttlSeconds?: number): Promise<void> {
    this.put(key, value, ttlSeconds);
  }

  async setIfAbsent(key: string, value: string, ttlSeconds?: number): Promise<boolean> {
    if (this.live(key)) return false;
    this.put(key, value, ttlSeconds);
    return true;
  }

  async delete(keys: string[]): Promise<void> {
    for (const key of keys) this.entries.delete(key);
  }

  async addMember(key: string, member: string, ttlSeconds?: number): Promise<void> {
    const entry = this.live(key);
    const members = entry && entry.value instanceof Set ? entry.value : new Set<string>();
    members.add(member);
    const expiresAt = ttlSeconds === undefined ? Infinity : this.clock.now() + ttlSeconds * 1000;
    this.entries.set(key, { value: members, expiresAt: Math.max(expiresAt, entry?.expiresAt ?? 0) });
  }

  async members(key: string): Promise<string[]> {
    const value = this.live(key)?.value;
    return value instanceof Set ? [...value] : [];
  }
}
