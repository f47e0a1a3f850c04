import { z } from "zod";
import { type Owner, owned } from "../access.js";
import { ExpiringLru } from "../expiring-lru.js";
import { FallbackStore } from "../fallback-store.js";

/** Who started a workspace query, as the store keeps it: read back from Redis through this schema (one that does not parse is no owner). */
export const queryOwnerSchema = z.object({
  /** The principal that created it (docs/governance.md#who-asks). */
  principal: z.string(),
  workspace: z.string(),
});

/**
 * Where the owners of the workspace queries the adapter created live (docs/governance.md#whose-query-it-is):
 * query id → who started it, for the thread's lifetime. In process, or in Redis so that any replica
 * checks a `query_id` another replica's answer gave. An owner once recorded is never replaced by
 * another (a query id names one thread).
 */
export interface QueryOwnerStore {
  /** Who started `queryId`, or null when the store has no record of it (not created here, or its lifetime is over). */
  get(queryId: string): Promise<Owner | null>;
  /**
   * Records `owner` as the query's for `ttlSeconds` from now (again on every turn: its lifetime
   * starts over), unless another owns it: false then, and the record stays as it was.
   */
  claim(queryId: string, owner: Owner, ttlSeconds: number): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * The in-process store: bounded in entries, the oldest written of the principal holding the most
 * going first (one key's flood of queries pushes out its own records, never another's), each with
 * its own expiry.
 */
export class MemoryQueryOwnerStore implements QueryOwnerStore {
  private readonly entries: ExpiringLru<Owner>;

  constructor(maxEntries: number, now: () => number = Date.now) {
    this.entries = new ExpiringLru({ maxEntries, now, ownerOf: (owner) => owner.principal });
  }

  async get(queryId: string): Promise<Owner | null> {
    return this.entries.get(queryId) ?? null;
  }

  async claim(queryId: string, owner: Owner, ttlSeconds: number): Promise<boolean> {
    const held = this.entries.get(queryId);
    if (held && !owned(held, owner.principal, owner.workspace)) return false;
    this.entries.set(queryId, { principal: owner.principal, workspace: owner.workspace }, ttlSeconds);
    return true;
  }

  async close(): Promise<void> {}
}

/**
 * The owners in a shared store (Redis) with this replica's own memory of the queries it created
 * behind it (`FallbackStore`). An owner never changes, so the replica's memory is never stale; a
 * claim this replica's memory refuses (another owns the query) is refused without asking Redis.
 */
export function fallbackQueryOwnerStore(shared: QueryOwnerStore, local: MemoryQueryOwnerStore): QueryOwnerStore {
  const stores = new FallbackStore<QueryOwnerStore>(shared, local);
  return {
    get: (queryId) => stores.read((store) => store.get(queryId)),
    claim: async (queryId, owner, ttlSeconds) => {
      if (!(await local.claim(queryId, owner, ttlSeconds))) return false;
      return shared.claim(queryId, owner, ttlSeconds);
    },
    close: () => stores.close(),
  };
}
