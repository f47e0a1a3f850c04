import type { UpstreamQuery } from "./query-schemas.js";

/**
 * Sharing one workspace's polling between replicas (docs/upstream-assumptions.md#polling): for each
 * (credential, workspace) group, one replica — the one holding the group's lease — lists the
 * queries every replica waits for and shares what it finds; the others feed their waiters from
 * that instead of polling. Implemented over Redis (`src/redis/redis-poll-sharing.ts`).
 */
export interface PollSharing {
  /**
   * Joins a group (a hash of the credential, and the workspace); `onShared` receives what the lease
   * holder found, with the W3C `traceparent` of its poll when it traces (docs/observability.md).
   */
  join(group: string, onShared: (items: UpstreamQuery[], pollTraceparent?: string) => void, onHandover: () => void): SharedGroup;
  close(): Promise<void>;
}

/** This replica's part in one group. */
export interface SharedGroup {
  /**
   * Before a poll: registers the ids this replica waits for, and says whether it polls now (it
   * holds the lease, nobody does, the holder is silent, or sharing is unavailable: then it falls
   * back to polling alone) and which ids other replicas wait for. Never waits on Redis long.
   */
  turn(ownIds: readonly string[]): Promise<{ poll: boolean; othersWaitFor: string[] }>;
  /** After a poll: shares the items the group waits for (an empty list still says the holder is alive), and the poll's trace context. */
  share(items: UpstreamQuery[], pollTraceparent: string | undefined): void;
  /** This replica waits for this id no more. */
  forget(id: string): void;
  /** This replica waits for nothing in the group any more: hands the lease over. */
  leave(): void;
}
