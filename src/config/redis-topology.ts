import { z } from "zod";
import { documented, optionalText } from "./variables.js";

/** One Redis node or sentinel as `host:port` names it (IPv6 in brackets: `[::1]:6379`). */
export interface RedisNode {
  host: string;
  port: number;
}

/** Credentials and TLS shared by the data nodes of a cluster or a Sentinel set-up. */
interface NodeAccess {
  username: string | undefined;
  password: string | undefined;
  /** TLS to the nodes, the hostnames kept for certificate checks (ElastiCache's pattern). */
  tls: boolean;
}

/**
 * Which Redis the replicas share (docs/architecture/redis.md#redis-topologies): one node by URL, a Redis
 * Cluster by its seed nodes, or a Sentinel-watched master by its sentinels and name. Topology is
 * configuration, not code paths: one factory (`src/redis/redis-connection.ts`) builds a client for
 * any of them.
 */
export type RedisTopology =
  | { kind: "single"; url: string }
  | ({ kind: "cluster"; nodes: RedisNode[] } & NodeAccess)
  | ({
      kind: "sentinel";
      sentinels: RedisNode[];
      master: string;
      sentinelUsername: string | undefined;
      sentinelPassword: string | undefined;
    } & NodeAccess);

/** The variables that name which Redis the replicas share (the redis section's first part, src/config/redis-settings.ts). */
export const redisTopologyVariables = z.object({
  REDIS_URL: documented(
    optionalText.pipe(z.url({ protocol: /^rediss?$/ }).optional()),
    "One Redis node, `redis://[user:password@]host:port[/db]` (`rediss://…` for TLS), to share state between replicas; unset keeps it in process",
  ),
  REDIS_CLUSTER_NODES: documented(
    optionalText,
    "A Redis Cluster instead: comma-separated `host:port` seed nodes (ElastiCache, MemoryDB, Memorystore, Azure cluster mode: the configuration endpoint)",
  ),
  REDIS_SENTINELS: documented(optionalText, "A Sentinel-watched Redis instead: comma-separated `host:port` of the sentinels"),
  REDIS_SENTINEL_MASTER: documented(optionalText, "The master name the sentinels monitor (with `REDIS_SENTINELS`)"),
  REDIS_USERNAME: documented(optionalText, "ACL user of the Redis nodes (cluster or Sentinel; with `REDIS_URL`, when the URL names none)"),
  REDIS_PASSWORD: documented(optionalText, "Password of the Redis nodes (cluster or Sentinel; with `REDIS_URL`, when the URL names none)"),
  REDIS_SENTINEL_USERNAME: documented(optionalText, "ACL user of the sentinels themselves, when they require one"),
  REDIS_SENTINEL_PASSWORD: documented(optionalText, "Password of the sentinels themselves, when they require one"),
  REDIS_TLS: documented(
    z.enum(["on", "off"]).default("off"),
    "`on`: TLS to cluster or Sentinel nodes, certificates checked against the hostnames given (extra CAs: `NODE_EXTRA_CA_CERTS`)",
  ),
});

/** The Redis topology variables, as the configuration schema validated them one by one. */
export type RedisVariables = z.output<typeof redisTopologyVariables>;

const NODE = /^(?:\[([0-9a-fA-F:.]+)\]|([^\s:[\]/,]+)):(\d{1,5})$/;

/** `host:port,host:port` as nodes; each bad entry is an issue on `variable`. */
function readNodes(text: string, variable: string, context: z.RefinementCtx): RedisNode[] {
  const nodes: RedisNode[] = [];
  const entries = text.split(",").map((entry) => entry.trim()).filter(Boolean);
  if (entries.length === 0) context.addIssue({ code: "custom", path: [variable], message: "must list at least one host:port" });
  for (const entry of entries) {
    const match = NODE.exec(entry);
    const port = Number(match?.[3]);
    if (!match || port < 1 || port > 65535) {
      context.addIssue({ code: "custom", path: [variable], message: `'${entry}' is not host:port (IPv6 as [::1]:6379)` });
      continue;
    }
    nodes.push({ host: (match[1] ?? match[2]) as string, port });
  }
  return nodes;
}

/**
 * The topology the Redis variables name, or undefined for none. Exactly one of `REDIS_URL`,
 * `REDIS_CLUSTER_NODES` and `REDIS_SENTINELS`; the others' settings only with theirs; a clear
 * issue for anything ambiguous or malformed.
 */
export function redisTopologyOf(env: RedisVariables, context: z.RefinementCtx): RedisTopology | undefined {
  const issue = (path: string, message: string) => context.addIssue({ code: "custom", path: [path], message });
  const named = (["REDIS_URL", "REDIS_CLUSTER_NODES", "REDIS_SENTINELS"] as const).filter((name) => env[name] !== undefined);
  if (named.length > 1) {
    issue(named[1] as string, `set only one of ${named.join(", ")} (one node, a cluster, or Sentinel)`);
    return undefined;
  }
  if (env.REDIS_SENTINEL_MASTER !== undefined && env.REDIS_SENTINELS === undefined) {
    issue("REDIS_SENTINEL_MASTER", "only applies with REDIS_SENTINELS");
  }
  for (const name of ["REDIS_SENTINEL_USERNAME", "REDIS_SENTINEL_PASSWORD"] as const) {
    if (env[name] !== undefined && env.REDIS_SENTINELS === undefined) issue(name, "only applies with REDIS_SENTINELS");
  }
  const access: NodeAccess = { username: env.REDIS_USERNAME, password: env.REDIS_PASSWORD, tls: env.REDIS_TLS === "on" };
  if (env.REDIS_URL !== undefined) {
    const url = new URL(env.REDIS_URL);
    if ((url.username || url.password) && (access.username !== undefined || access.password !== undefined)) {
      issue("REDIS_PASSWORD", "REDIS_URL carries its own credentials: set them in one place");
    }
    if (access.tls && url.protocol !== "rediss:") issue("REDIS_TLS", "with REDIS_URL, ask for TLS with rediss://");
    if (access.username !== undefined) url.username = encodeURIComponent(access.username);
    if (access.password !== undefined) url.password = encodeURIComponent(access.password);
    return { kind: "single", url: url.toString() };
  }
  if (env.REDIS_CLUSTER_NODES !== undefined) {
    return { kind: "cluster", nodes: readNodes(env.REDIS_CLUSTER_NODES, "REDIS_CLUSTER_NODES", context), ...access };
  }
  if (env.REDIS_SENTINELS !== undefined) {
    if (env.REDIS_SENTINEL_MASTER === undefined) issue("REDIS_SENTINEL_MASTER", "required with REDIS_SENTINELS: the name the sentinels monitor");
    return {
      kind: "sentinel",
      sentinels: readNodes(env.REDIS_SENTINELS, "REDIS_SENTINELS", context),
      master: env.REDIS_SENTINEL_MASTER ?? "",
      sentinelUsername: env.REDIS_SENTINEL_USERNAME,
      sentinelPassword: env.REDIS_SENTINEL_PASSWORD,
      ...access,
    };
  }
  for (const name of ["REDIS_USERNAME", "REDIS_PASSWORD"] as const) {
    if (env[name] !== undefined) issue(name, "only applies with REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS");
  }
  if (access.tls) issue("REDIS_TLS", "only applies with REDIS_CLUSTER_NODES or REDIS_SENTINELS");
  return undefined;
}

/** Where the topology's nodes are, for logs: never a credential. */
export function describeTopology(topology: RedisTopology): string {
  const list = (nodes: RedisNode[]) => nodes.map((node) => `${node.host}:${node.port}`).join(",");
  if (topology.kind === "single") {
    const url = new URL(topology.url);
    return `${url.protocol}//${url.host}`;
  }
  const tls = topology.tls ? " (TLS)" : "";
  if (topology.kind === "cluster") return `cluster ${list(topology.nodes)}${tls}`;
  return `sentinel ${topology.master}@${list(topology.sentinels)}${tls}`;
}
