import clusterKeySlot from "cluster-key-slot";

/**
 * The Redis Cluster hash slot of a key, by the function ioredis itself routes commands with
 * (`cluster-key-slot`), so the gate and the shard subscriber agree with the client on a key's node.
 */
export function keySlot(key: string): number {
  return clusterKeySlot(key);
}

/**
 * The master of `key`'s slot in a cluster client's slot map (slot → node names, master first), as
 * the client last learnt it; undefined while no owner is known. The gate routes commands by it, the
 * shard subscriber places channels by it.
 */
export function slotMaster(slots: readonly (readonly string[] | undefined)[], key: string): string | undefined {
  return slots[keySlot(key)]?.[0];
}
