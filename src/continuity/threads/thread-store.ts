import { ExpiringLru } from "../expiring-lru.js";
import { FallbackStore } from "../fallback-store.js";

/**
 * Where the thread memory lives (docs/architecture.md#conversations): a thread key (a hash of a
 * chat history, or of a client's conversation id) → the workspace query that history continues,
 * with a time to live. In process, or in Redis so that replicas share it.
 */
export interface ThreadStore {
  get(key: string): Promise<string | null>;
  set(key: string, queryId: string, ttlSeconds: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * The in-process store: bounded in entries, the least recently used going first, each entry with
 * its own expiry. The default for one replica; several replicas share threads through Redis instead.
 */
export class MemoryThreadStore implements ThreadStore {
  private readonly entries: ExpiringLru<string>;

  constructor(maxEntries: number, now: () => number = Date.now) {
    this.entries = new ExpiringLru({ maxEntries, now, order: "recently-used" });
  }

  async get(key: string): Promise<string | null> {
    return this.entries.get(key) ?? null;
  }

  async set(key: string, queryId: string, ttlSeconds: number): Promise<void> {
    this.entries.set(key, queryId, ttlSeconds);
  }

  /** Number of entries held (expired ones included until touched or pushed out). */
  get size(): number {
    return this.entries.size;
  }

  async close(): Promise<void> {}
}

/**
 * The thread memory in a shared store (Redis) with this replica's own memory of the turns it
 * answered behind it (`FallbackStore`). The mapping it holds never changes (a thread key names one
 * query), so the replica's memory is never stale.
 */
export function fallbackThreadStore(shared: ThreadStore, local: MemoryThreadStore): ThreadStore {
  const stores = new FallbackStore<ThreadStore>(shared, local);
  return {
    get: (key) => stores.read((store) => store.get(key)),
    set: (key, queryId, ttlSeconds) => stores.write((store) => store.set(key, queryId, ttlSeconds)),
    close: () => stores.close(),
  };
}
