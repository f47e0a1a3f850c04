import { Cluster, type Redis } from "ioredis";
import { slotMaster } from "./key-slot.js";

/** What the shard subscriber reads of the adapter's cluster command client: its slot map, and when it was learnt again (the gate reads it too). */
export interface SlotMap {
  /** Slot → node names (`host:port`), master first, as the client last learnt them. */
  readonly slots: readonly (readonly string[] | undefined)[];
  on(event: "refresh", listener: () => void): unknown;
  off(event: "refresh", listener: () => void): unknown;
  /** Asks for the map again (the paced client spaces such asks: `PacedCluster`). */
  refreshSlotsCache(): void;
}

/** A cluster client's connection to one master, as the gate PINGs it. */
export interface MasterConnection {
  readonly options: { readonly host?: string | undefined; readonly port?: number | undefined };
  ping(): Promise<unknown>;
}

/** What the gate reads of a cluster client: the slot map, and the master connections it PINGs. */
export interface ClusterView extends SlotMap {
  nodes(role: "master"): MasterConnection[];
}

/** In a cluster: a command no key routes (the client picks a node), or a slot whose owner is not known yet. */
export const ANY_NODE = "cluster";

/** The cluster view of a connection: the client itself when it is a Cluster, else null (one node, or a Sentinel-watched master). */
export function clusterViewOf(redis: Redis | Cluster): ClusterView | null {
  return redis instanceof Cluster ? redis : null;
}

/** The node that answers commands on `key`: the master of the key's slot as the client last learnt it, or `ANY_NODE`. */
export function nodeOfKey(cluster: ClusterView, key: string | null): string {
  if (key === null) return ANY_NODE;
  return slotMaster(cluster.slots, key) ?? ANY_NODE;
}

/** Whether the client's slot map still names `node` the master of some slot. */
export function ownsSlots(cluster: ClusterView, node: string): boolean {
  return node !== ANY_NODE && cluster.slots.some((owners) => owners?.[0] === node);
}

/** The client's connection to master `node`, while it has one (a dead master's leaves the pool before its slots leave the map). */
export function masterConnection(cluster: ClusterView, node: string): MasterConnection | undefined {
  return cluster.nodes("master").find((candidate) => `${candidate.options.host}:${candidate.options.port}` === node);
}
