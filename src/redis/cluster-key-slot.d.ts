/** Types for `cluster-key-slot` (ioredis's slot function), which ships none. */
declare module "cluster-key-slot" {
  /** The Redis Cluster hash slot (0–16383) of a key, its hash tag's when it has one. */
  export default function clusterKeySlot(key: string | readonly number[]): number;
}
