/**
 * A lookup in a shared store, with this replica's own memory standing in only when the shared store
 * cannot answer (docs/architecture.md#redis-down-or-slow): what the shared store answers is the truth
 * (a response deleted elsewhere stays deleted), and a replica can still continue what it stored
 * itself while Redis is away. When neither knows, the shared store's failure is rethrown: the
 * caller must not mistake "unknown" for "not found".
 */
export async function sharedOrLocal<T>(shared: () => Promise<T | null>, local: () => Promise<T | null>): Promise<T | null> {
  try {
    return await shared();
  } catch (error) {
    const own = await local();
    if (own !== null) return own;
    throw error;
  }
}
