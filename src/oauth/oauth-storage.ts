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
  bytes: number;
}

/** Records of pending authorizations (and their sessions): what goes first when the memory is full. */
const EPHEMERAL = /^(Interaction|Session|sessionUid|PushedAuthorizationRequest|ReplayDetection):/;

/** About what an entry costs in memory: its text twice over (UTF-16), and a fixed overhead. */
const sizeOf = (key: string, value: Entry["value"]) =>
  64 + 2 * (key.length + (typeof value === "string" ? value.length : [...value].reduce((sum, member) => sum + member.length + 16, 0)));

/**
 * The in-process storage (no Redis): bounded in bytes and entries, each entry dropped at its
 * expiry (looked at when read, swept as entries are written). When full, what expired goes first,
 * then pending authorizations and their sessions (oldest first), and only then grants, tokens and
 * clients: a flood of authorization requests cannot sign everyone out. Grants end with the process.
 */
export class MemoryOAuthStorage implements OAuthStorage {
  private readonly ephemeral = new Map<string, Entry>();
  private readonly durable = new Map<string, Entry>();
  private bytes = 0;

  constructor(
    private readonly clock: Clock,
    private readonly maxBytes = 64 * 1024 * 1024,
    private readonly maxEntries = 100_000,
  ) {}

  private mapOf(key: string): Map<string, Entry> {
    return EPHEMERAL.test(key) ? this.ephemeral : this.durable;
  }

  private drop(key: string): void {
    const map = this.mapOf(key);
    const entry = map.get(key);
    if (!entry) return;
    this.bytes -= entry.bytes;
    map.delete(key);
  }

  private live(key: string): Entry | undefined {
    const entry = this.mapOf(key).get(key);
    if (entry && entry.expiresAt <= this.clock.now()) {
      this.drop(key);
      return undefined;
    }
    return entry;
  }

  private put(key: string, value: Entry["value"], expiresAt: number): void {
    this.drop(key);
    const bytes = sizeOf(key, value);
    if (this.full(bytes)) this.sweep(bytes);
    this.mapOf(key).set(key, { value, expiresAt, bytes });
    this.bytes += bytes;
  }

  private full(adding: number): boolean {
    return this.bytes + adding > this.maxBytes || this.ephemeral.size + this.durable.size >= this.maxEntries;
  }

  /** Drops what expired, then the oldest pending authorizations, then the oldest of the rest, while still full. */
  private sweep(adding: number): void {
    const now = this.clock.now();
    for (const map of [this.ephemeral, this.durable]) for (const [key, entry] of map) if (entry.expiresAt <= now) this.drop(key);
    for (const map of [this.ephemeral, this.durable]) {
      for (const key of map.keys()) {
        if (!this.full(adding)) return;
        this.drop(key);
      }
    }
  }

  private expiry(ttlSeconds: number | undefined): number {
    return ttlSeconds === undefined ? Infinity : this.clock.now() + ttlSeconds * 1000;
  }

  async get(key: string): Promise<string | undefined> {
    const value = this.live(key)?.value;
    return typeof value === "string" ? value : undefined;
  }

  async set(key: string, value: string, ttlSeconds?: number): Promise<void> {
    this.put(key, value, this.expiry(ttlSeconds));
  }

  async setIfAbsent(key: string, value: string, ttlSeconds?: number): Promise<boolean> {
    if (this.live(key)) return false;
    this.put(key, value, this.expiry(ttlSeconds));
    return true;
  }

  async delete(keys: string[]): Promise<void> {
    for (const key of keys) this.drop(key);
  }

  async addMember(key: string, member: string, ttlSeconds?: number): Promise<void> {
    const entry = this.live(key);
    const members = new Set(entry && entry.value instanceof Set ? entry.value : []);
    members.add(member);
    this.put(key, members, Math.max(this.expiry(ttlSeconds), entry?.expiresAt ?? 0));
  }

  async members(key: string): Promise<string[]> {
    const value = this.live(key)?.value;
    return value instanceof Set ? [...value] : [];
  }
}
