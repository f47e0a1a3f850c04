import { sharedOrLocal } from "./shared-or-local.js";

/**
 * A shared store (Redis) with this replica's own memory of what it wrote behind it
 * (docs/architecture.md#redis-down-or-slow), whatever the store: writes go to both, the replica's
 * memory first; a lookup asks the shared store, and the replica's memory only when the shared store
 * cannot answer (`sharedOrLocal`), so that what the shared store answers is the truth (a record
 * deleted through another replica stays deleted) and a replica can still continue what it wrote
 * itself while Redis is away. A removal needs the shared store. The thread memory and stored
 * responses each wrap one in their store's own interface.
 */
export class FallbackStore<Store extends { close(): Promise<void> }> {
  constructor(
    private readonly shared: Store,
    private readonly local: Store,
  ) {}

  /** A lookup: the shared store's answer, or the replica's own when the shared store cannot give one. */
  read<T>(lookup: (store: Store) => Promise<T | null>): Promise<T | null> {
    return sharedOrLocal(
      () => lookup(this.shared),
      () => lookup(this.local),
    );
  }

  /** A write: to the replica's memory, then to the shared store (whose failure is the caller's). */
  async write(write: (store: Store) => Promise<void>): Promise<void> {
    await write(this.local);
    await write(this.shared);
  }

  /** A removal: the shared store's answer, the replica's memory forgetting it too. */
  async remove<T>(remove: (store: Store) => Promise<T>): Promise<T> {
    const removed = await remove(this.shared);
    await remove(this.local);
    return removed;
  }

  async close(): Promise<void> {
    await Promise.all([this.shared.close(), this.local.close()]);
  }
}
