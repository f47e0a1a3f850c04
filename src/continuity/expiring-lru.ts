import { OwnerShares } from "./owner-shares.js";

/** How an `ExpiringLru` orders its entries for eviction: by last write, or by last read or write. */
export type EvictionOrder = "recently-written" | "recently-used";

/** What an `ExpiringLru` is built from. */
export interface ExpiringLruOptions<Value> {
  /** At most this many entries; past it the oldest go first. */
  maxEntries: number;
  /** Milliseconds since the epoch (the adapter's clock). */
  now: () => number;
  /** Whether a read counts as a use (`recently-used`) or only writes do (`recently-written`, the default). */
  order?: EvictionOrder;
  /** Told of every entry that leaves: expired, pushed out, replaced or deleted (an index beside the map stays in step). */
  onRemove?: (key: string, value: Value) => void;
  /**
   * Who an entry belongs to (its principal). Given, a full map pushes out the oldest entry of
   * whoever holds the most, not the oldest of all: one principal's flood evicts its own entries.
   */
  ownerOf?: (value: Value) => string;
}

interface Held<Value> {
  value: Value;
  expiresAt: number;
}

/**
 * The in-process memory of every continuity store (docs/architecture.md#continuity): a map bounded
 * in entries, each with its own expiry, looked at when read; with owners, bounded per owner too
 * (the largest holder's entries go first). Owned by the store that holds it, so two adapters in
 * one process share nothing.
 */
export class ExpiringLru<Value> {
  private readonly entries = new Map<string, Held<Value>>();
  private readonly shares: OwnerShares | undefined;

  constructor(private readonly options: ExpiringLruOptions<Value>) {
    this.shares = options.ownerOf ? new OwnerShares() : undefined;
  }

  /** Entries held (expired ones included until read or pushed out). */
  get size(): number {
    return this.entries.size;
  }

  /** The live value of `key`; an expired one is dropped. */
  get(key: string): Value | undefined {
    const held = this.entries.get(key);
    if (!held) return undefined;
    if (held.expiresAt <= this.options.now()) {
      this.remove(key, held);
      return undefined;
    }
    if (this.options.order === "recently-used") {
      // Most recently used goes last: the first key is the next to go.
      this.entries.delete(key);
      this.entries.set(key, held);
      this.shares?.touch(this.ownerOf(held.value), key);
    }
    return held.value;
  }

  /** Sets `key` for `ttlSeconds` as the newest entry, pushing the oldest out beyond the bound. */
  set(key: string, value: Value, ttlSeconds: number): void {
    const before = this.entries.get(key);
    if (before) this.remove(key, before);
    this.entries.set(key, { value, expiresAt: this.options.now() + ttlSeconds * 1000 });
    this.shares?.add(this.ownerOf(value), key);
    while (this.entries.size > this.options.maxEntries) {
      const next = this.shares?.nextToGo() ?? (this.entries.keys().next().value as string);
      this.remove(next, this.entries.get(next) as Held<Value>);
    }
  }

  /** Gives a live entry `ttlSeconds` more from now, without moving it; false when there is none. */
  expire(key: string, ttlSeconds: number): boolean {
    const held = this.entries.get(key);
    if (!held || held.expiresAt <= this.options.now()) return false;
    held.expiresAt = this.options.now() + ttlSeconds * 1000;
    return true;
  }

  /** Deletes `key`; whether it held a live entry. */
  delete(key: string): boolean {
    const held = this.entries.get(key);
    if (!held) return false;
    this.remove(key, held);
    return held.expiresAt > this.options.now();
  }

  private remove(key: string, held: Held<Value>): void {
    this.entries.delete(key);
    this.shares?.remove(this.ownerOf(held.value), key);
    this.options.onRemove?.(key, held.value);
  }

  private ownerOf(value: Value): string {
    return this.options.ownerOf?.(value) ?? "";
  }
}
