import { type ChainableCommander, type Cluster, Redis, type RedisOptions } from "ioredis";
import type { RedisTopology } from "../config/redis-topology.js";
import { ConnectionSubscriber, type OpenSubscriber } from "./channel-subscriber.js";
import { clusterViewOf } from "./cluster-view.js";
import { PacedCluster, type PacedClusterOptions } from "./paced-cluster.js";
import { ReopeningRedis } from "./reopening-redis.js";
import { ShardSubscriber } from "./shard-subscriber.js";

/** A connection to whichever Redis the configuration names: one node (or a Sentinel-watched master), or a cluster. */
export type RedisClient = Redis | Cluster;

/** How a connection bounds its commands. */
export interface RedisConnectionOptions {
  /**
   * Bound on one command while connected (`REDIS_COMMAND_TIMEOUT_MS`): long enough for a slow Redis
   * (a busy machine, a fork, a failover) to answer, since a lookup that gives up too soon cannot
   * tell a conversation apart from a new one (docs/architecture/redis.md#redis-down-or-slow).
   */
  commandTimeoutMs: number;
}

/**
 * Settings every node connection gets: never queue, never retry a command, a bounded command time,
 * and no subscription renewed by ioredis. The adapter renews its own (`ConnectionSubscriber` listens
 * to every channel again after a reconnection, and handles a refusal); ioredis's renewal at
 * 'ready' drops its promise, so a connection that died again at that moment (seen in a Sentinel
 * failover: "Stream isn't writeable") left an unhandled rejection, which ends a Node process.
 */
function nodeSettings(options: RedisConnectionOptions): RedisOptions {
  return {
    autoResubscribe: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: options.commandTimeoutMs,
    connectTimeout: 2000,
  };
}

/**
 * A cluster client asks for the slot map at most this often (`PacedCluster`): in a failover, four
 * times a second cost the replicas about half the CPU that asking after every redirection did, and
 * the dead master's keys were served again within 0.3 s of its replica's promotion
 * (docs/scale-out.md#in-a-failover).
 */
const SLOT_MAP_SPACING_MS = 250;

/** How soon a Sentinel-watched master's connection that ioredis gave up for good is opened again (`ReopeningRedis`). */
const REOPEN_MS = 100;

/** Reconnect soon after an outage, then every second at most. */
const reconnectDelay = (attempt: number) => Math.min(1000, 50 * attempt);

/**
 * The one factory of Redis connections (docs/architecture/redis.md#redis-topologies): a node by URL
 * (`rediss://` for TLS), a Redis Cluster by its seeds, or the master a set of sentinels names.
 * Every connection never queues (docs/architecture/redis.md#redis-down-or-slow): no offline queue (a
 * command while disconnected fails at once instead of waiting for a reconnect), no retries of a
 * command, a bounded command time. Whether a failure means "slow" or "down" is the `RedisGate`'s
 * call. Credentials and TLS settings go to the client only, never to a log.
 */
export function openRedis(topology: RedisTopology, options: RedisConnectionOptions): RedisClient {
  const client = create(topology, options);
  // Connection errors surface on the commands that need the connection; logging them here as well
  // would repeat them for every reconnect attempt.
  client.on("error", () => undefined);
  return client;
}

/** The user name and password a node or cluster asks for, when the configuration names them. */
function credentialsOf(topology: Exclude<RedisTopology, { kind: "single" }>): Pick<RedisOptions, "username" | "password"> {
  return {
    ...(topology.username === undefined ? {} : { username: topology.username }),
    ...(topology.password === undefined ? {} : { password: topology.password }),
  };
}

function create(topology: RedisTopology, options: RedisConnectionOptions): RedisClient {
  const settings = nodeSettings(options);
  if (topology.kind === "single") return new Redis(topology.url, { ...settings, lazyConnect: false, retryStrategy: reconnectDelay });
  const credentials = credentialsOf(topology);
  if (topology.kind === "sentinel") {
    return new ReopeningRedis({
      ...settings,
      ...credentials,
      sentinels: topology.sentinels,
      name: topology.master,
      role: "master",
      ...(topology.sentinelUsername === undefined ? {} : { sentinelUsername: topology.sentinelUsername }),
      ...(topology.sentinelPassword === undefined ? {} : { sentinelPassword: topology.sentinelPassword }),
      ...(topology.tls ? { tls: {}, enableTLSForSentinelMode: true } : {}),
      // Without it a master that hangs (rather than dies) can go unnoticed by the client.
      failoverDetector: true,
      sentinelRetryStrategy: reconnectDelay,
      retryStrategy: reconnectDelay,
    }, REOPEN_MS);
  }
  const cluster: PacedClusterOptions = {
    // Replies as ioredis has always mapped them (its default, named for the constructor's types).
    redisOptions: { ...settings, ...credentials, ...(topology.tls ? { tls: {} } : {}), replyMapping: "legacy" },
    enableOfflineQueue: false,
    // A node that dies is replaced by its replica: find the new slot owners soon, and keep the
    // redirections' total wait above a failover's few seconds.
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 200,
    maxRedirections: 16,
    slotsRefreshTimeout: 1000,
    clusterRetryStrategy: reconnectDelay,
    // With TLS the node names stay names, so certificates are checked against them (ElastiCache's configuration endpoint).
    ...(topology.tls ? { dnsLookup: keepHostname } : {}),
  };
  return new PacedCluster(topology.nodes, cluster, SLOT_MAP_SPACING_MS);
}

/**
 * Where the poll sharing's subscriptions are held (docs/architecture/redis.md#redis-topologies): in a
 * cluster, a plain connection per master that has a channel wanted, placed by the slot map of
 * `commands` (the gate's cluster client), so that no second cluster client learns the map again;
 * otherwise a connection of its own, which ioredis reconnects.
 */
export function openSubscriber(topology: RedisTopology, options: RedisConnectionOptions, commands: RedisClient): OpenSubscriber {
  const map = topology.kind === "cluster" ? clusterViewOf(commands) : null;
  if (topology.kind !== "cluster" || !map) return (events) => new ConnectionSubscriber(openRedis(topology, options) as Redis, events);
  const settings: RedisOptions = {
    ...nodeSettings(options),
    ...credentialsOf(topology),
    ...(topology.tls ? { tls: {} } : {}),
    // Subscriptions asked for before the connection is up wait for it; an ended one is not reopened
    // (its channels go where the slot map says: the master that died has been replaced).
    enableOfflineQueue: true,
    retryStrategy: () => null,
  };
  return (events) =>
    new ShardSubscriber({
      map,
      connect: (node) => {
        const at = node.lastIndexOf(":");
        const connection = new Redis({ ...settings, host: node.slice(0, at), port: Number(node.slice(at + 1)) });
        connection.on("error", () => undefined);
        return connection;
      },
      events,
    });
}

/** A cluster's DNS lookup that resolves nothing: the TLS check then sees the node's hostname, not an address. */
function keepHostname(address: string, callback: (error: null, address: string) => void): void {
  callback(null, address);
}

/** Whether a command failed with Redis's own reply (a wrong type, a `CROSSSLOT`, a script error): Redis answered, it is not an outage. */
export function isReplyError(error: unknown): boolean {
  return error instanceof Error && error.name === "ReplyError";
}

/** Runs a MULTI batch; the first command that failed inside it rejects, as a single command would. */
export async function execOrThrow(batch: ChainableCommander): Promise<[error: Error | null, result: unknown][]> {
  const results = (await batch.exec()) ?? [];
  const failed = results.find(([error]) => error);
  if (failed) throw failed[0];
  return results;
}
