import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AddressInfo, connect, createServer as createNetServer, type Socket } from "node:net";
import { Redis } from "ioredis";
import { canListen, freePort } from "./redis-server.js";
import { redisTlsArguments, type TestCertificates } from "./test-certificates.js";

/** One redis-server (a cluster node, a Sentinel-watched master or replica, or a sentinel) started by a test. */
export interface RedisProcess {
  port: number;
  child: ChildProcess;
  /** A client of this node alone (no cluster redirections). */
  client: Redis;
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A port free now whose cluster bus port (port + 10000) is free too, neither of them in `taken`. */
async function freeClusterPorts(taken: readonly number[]): Promise<number> {
  for (;;) {
    const port = await freePort();
    const bus = port + 10_000;
    if (bus < 65_536 && !taken.includes(port) && !taken.includes(bus) && (await canListen(bus))) return port;
  }
}

/** Polls `check` until it holds, or throws after `ms` with `what` in the message. */
export async function until(check: () => Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await wait(50);
  }
}

/** A redis-server that exited before it answered: most often a port it was to listen on was taken meanwhile. */
class ExitedAtStart extends Error {}

/**
 * Starts a redis-server with these arguments (loopback only, no persistence) and waits for its PING;
 * with `tls`, it listens with TLS only (the certificate names `localhost`). Rejects with
 * `ExitedAtStart` as soon as the process exits before answering.
 */
async function startNode(port: number, args: string[], dir: string, tls?: TestCertificates): Promise<RedisProcess> {
  const listen = tls ? redisTlsArguments(port, tls) : ["--port", String(port)];
  // A replica syncs at once (the default waits five seconds for more replicas to sync together).
  const child = spawn("redis-server", [...args, ...listen, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--repl-diskless-sync-delay", "0", "--dir", dir], {
    stdio: "ignore",
  });
  const secure = tls ? { tls: { ca: readFileSync(tls.ca), servername: "localhost" } } : {};
  const client = new Redis({ port, host: "127.0.0.1", lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => 50, enableOfflineQueue: false, ...secure });
  client.on("error", () => undefined);
  const exited = new Promise<never>((_, reject) =>
    child.once("exit", (code, signal) => reject(new ExitedAtStart(`redis-server on port ${port} exited at start (${signal ?? `code ${code}`})`))),
  );
  exited.catch(() => undefined);
  try {
    // Answering as itself (its process id), not as another test's server that took the port first.
    await Promise.race([
      exited,
      until(async () => {
        if (client.status === "wait") await client.connect();
        return (await client.info("server")).includes(`process_id:${child.pid}\r`);
      }, `redis-server on port ${port}`),
    ]);
  } catch (error) {
    client.disconnect();
    child.kill("SIGKILL");
    throw error;
  }
  return { port, child, client };
}

/** Kills a node (SIGKILL), and resolves once it is gone. */
export async function killNode(node: Pick<RedisProcess, "child"> & { client?: Redis }): Promise<void> {
  node.client?.disconnect();
  if (node.child.exitCode !== null || node.child.signalCode !== null) return;
  const exited = new Promise((resolve) => node.child.once("exit", resolve));
  node.child.kill("SIGKILL");
  await exited;
}

/** A 3-master Redis Cluster with a replica each, on loopback ports of its own. */
export interface RedisClusterServers {
  nodes: RedisProcess[];
  /** The adapter's environment for this cluster. */
  environment: Record<string, string>;
  /** The node that serves `key`'s slot now (asked of a live node). */
  masterOf(key: string): Promise<RedisProcess>;
  stop(): Promise<void>;
}

/**
 * Starts six redis-servers with cluster mode on (node timeout 1 s unless `nodeTimeoutMs` says
 * otherwise, so a dead master's replica takes over within about two seconds), joins them with `redis-cli --cluster create` (three masters,
 * one replica each), and waits until the cluster is ok and every replica is in sync. With `tls`, as
 * ElastiCache runs a TLS cluster: TLS only (clients, the cluster bus, replication), and the nodes
 * announced by hostname (`localhost`), which the certificate names.
 */
export async function startRedisCluster(
  options: { tls?: TestCertificates; requireFullCoverage?: boolean; nodeTimeoutMs?: number } = {},
): Promise<RedisClusterServers> {
  const { tls } = options;
  const dir = mkdtempSync(join(tmpdir(), "adapter-redis-cluster-"));
  // Each node's port and its cluster bus's (port + 10000), none of them another's.
  const taken: number[] = [];
  const clusterArguments = ["--cluster-enabled", "yes", "--cluster-node-timeout", String(options.nodeTimeoutMs ?? 1000), "--enable-debug-command", "local"];
  // Redis's default (yes) refuses every command, on every master, while any slot has no master (a failover).
  if (options.requireFullCoverage === false) clusterArguments.push("--cluster-require-full-coverage", "no");
  const tlsArguments = tls
    ? ["--tls-cluster", "yes", "--tls-replication", "yes", "--cluster-announce-hostname", "localhost", "--cluster-preferred-endpoint-type", "hostname"]
    : [];
  // A port found free can be taken again before redis-server binds it, its bus port most of all (an
  // outgoing connection's ephemeral port on a busy machine): the node is then started on other ports.
  const startClusterNode = async (): Promise<RedisProcess> => {
    for (let attempt = 1; ; attempt += 1) {
      const port = await freeClusterPorts(taken);
      taken.push(port, port + 10_000);
      try {
        return await startNode(port, [...clusterArguments, ...tlsArguments, "--cluster-config-file", `nodes-${port}.conf`], dir, tls);
      } catch (error) {
        if (!(error instanceof ExitedAtStart) || attempt === 5) throw error;
      }
    }
  };
  const nodes = await Promise.all(Array.from({ length: 6 }, () => startClusterNode()));
  const ports = nodes.map((node) => node.port);
  const cli = tls ? ["--tls", "--cacert", tls.ca, "--sni", "localhost"] : [];
  const created = spawnSync("redis-cli", [...cli, "--cluster", "create", ...ports.map((port) => `127.0.0.1:${port}`), "--cluster-replicas", "1", "--cluster-yes"], {
    encoding: "utf8",
    timeout: 30_000,
  });
  if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
  await until(async () => {
    for (const node of nodes) {
      const info = await node.client.cluster("INFO");
      if (!String(info).includes("cluster_state:ok")) return false;
      const replication = await node.client.info("replication");
      if (replication.includes("role:slave") && !replication.includes("master_link_status:up")) return false;
    }
    return true;
  }, "the cluster to be ok with every replica in sync");
  const live = () => nodes.find((node) => node.child.exitCode === null && node.child.signalCode === null) as RedisProcess;
  return {
    nodes,
    environment: {
      REDIS_CLUSTER_NODES: ports.slice(0, 3).map((port) => `${tls ? "localhost" : "127.0.0.1"}:${port}`).join(","),
      ...(tls ? { REDIS_TLS: "on" } : {}),
    },
    async masterOf(key) {
      const slot = Number(await live().client.cluster("KEYSLOT", key));
      const slots = await live().client.cluster("SLOTS");
      const owner = slots.find(([from, to]) => slot >= from && slot <= to);
      const node = nodes.find((candidate) => candidate.port === owner?.[2]?.[1]);
      if (!node) throw new Error(`no node serves slot ${slot}`);
      return node;
    },
    async stop() {
      await Promise.all(nodes.map((node) => killNode(node)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A master, its replica and three sentinels watching them, on loopback ports of their own. */
export interface RedisSentinelServers {
  master: RedisProcess;
  replica: RedisProcess;
  sentinels: RedisProcess[];
  /** The master's name the sentinels monitor. */
  name: string;
  environment: Record<string, string>;
  /** The port of the master the sentinels name now. */
  currentMasterPort(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Starts a master, a replica of it, and three sentinels (`down-after-milliseconds` 1000, quorum 2;
 * each with a writable config file of its own), and waits until every sentinel knows the replica
 * and the other sentinels.
 */
export async function startRedisSentinel(): Promise<RedisSentinelServers> {
  const dir = mkdtempSync(join(tmpdir(), "adapter-redis-sentinel-"));
  const name = "adapter-master";
  const master = await startNode(await freePort(), [], dir);
  const replica = await startNode(await freePort(), ["--replicaof", "127.0.0.1", String(master.port)], dir);
  await until(async () => (await replica.client.info("replication")).includes("master_link_status:up"), "the replica to sync");
  // Each sentinel is told of the replica and of the other sentinels in its config (what Sentinel would
  // otherwise learn over several seconds of hello messages and INFO polls).
  const ports = [await freePort(), await freePort(), await freePort()];
  const ids = ports.map(() => randomBytes(20).toString("hex"));
  const sentinels: RedisProcess[] = [];
  for (const [index, port] of ports.entries()) {
    const file = join(dir, `sentinel-${port}.conf`);
    writeFileSync(
      file,
      [
        `port ${port}`,
        "bind 127.0.0.1",
        `sentinel myid ${ids[index]}`,
        `sentinel monitor ${name} 127.0.0.1 ${master.port} 2`,
        `sentinel down-after-milliseconds ${name} 1000`,
        `sentinel failover-timeout ${name} 3000`,
        `sentinel parallel-syncs ${name} 1`,
        `sentinel known-replica ${name} 127.0.0.1 ${replica.port}`,
        ...ports.flatMap((other, otherIndex) => (otherIndex === index ? [] : [`sentinel known-sentinel ${name} 127.0.0.1 ${other} ${ids[otherIndex]}`])),
        "",
      ].join("\n"),
    );
    const child = spawn("redis-server", [file, "--sentinel"], { stdio: "ignore" });
    const client = new Redis({ port, host: "127.0.0.1", lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => 50, enableOfflineQueue: false });
    client.on("error", () => undefined);
    await until(async () => {
      if (client.status === "wait") await client.connect();
      return (await client.ping()) === "PONG";
    }, `sentinel on port ${port}`);
    sentinels.push({ port, child, client });
  }
  await until(async () => {
    for (const sentinel of sentinels) {
      const known = (await sentinel.client.call("SENTINEL", "REPLICAS", name)) as unknown[];
      const peers = (await sentinel.client.call("SENTINEL", "SENTINELS", name)) as unknown[];
      if (known.length < 1 || peers.length < 2) return false;
    }
    return true;
  }, "the sentinels to know the replica and each other");
  return {
    master,
    replica,
    sentinels,
    name,
    environment: { REDIS_SENTINELS: sentinels.map((sentinel) => `127.0.0.1:${sentinel.port}`).join(","), REDIS_SENTINEL_MASTER: name },
    async currentMasterPort() {
      for (const sentinel of sentinels) {
        const address = (await sentinel.client.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", name).catch(() => null)) as [string, string] | null;
        if (address) return Number(address[1]);
      }
      throw new Error("no sentinel answers");
    },
    async stop() {
      for (const node of [master, replica]) node.child.kill("SIGCONT");
      await Promise.all([master, replica, ...sentinels].map((node) => killNode(node)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A loopback TCP pass-through to a port whose answers reach the client `delayMs` late (what a busy machine makes of a sentinel). */
export interface DelayingProxy {
  port: number;
  close(): Promise<void>;
}

/**
 * Starts a `DelayingProxy` in front of `targetPort`: what the client sends goes on at once, what
 * the server answers is held `delayMs`, in order. Closing either side closes the other.
 */
export async function startDelayingProxy(targetPort: number, delayMs: number): Promise<DelayingProxy> {
  const sockets = new Set<Socket>();
  const server = createNetServer((client) => {
    const upstream = connect(targetPort, "127.0.0.1");
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("error", () => undefined);
      socket.on("close", () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.on("data", (chunk) => upstream.write(chunk));
    upstream.on("data", (chunk) => {
      setTimeout(() => client.writable && client.write(chunk), delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * Moves one slot of a running cluster from master `from` to master `to` as `redis-cli --cluster
 * reshard` does: `to` importing and `from` migrating, the slot's keys moved with `MIGRATE` until
 * none is left, then every master told that `to` owns it. Commands meanwhile follow `ASK` and
 * `MOVED`; Redis tells sharded subscribers of the slot's channels on `from` that they were unsubscribed.
 */
export async function migrateSlot(cluster: RedisClusterServers, slot: number, from: RedisProcess, to: RedisProcess): Promise<void> {
  const idOf = async (node: RedisProcess) => String(await node.client.call("CLUSTER", "MYID"));
  const [fromId, toId] = [await idOf(from), await idOf(to)];
  await to.client.call("CLUSTER", "SETSLOT", String(slot), "IMPORTING", fromId);
  await from.client.call("CLUSTER", "SETSLOT", String(slot), "MIGRATING", toId);
  for (;;) {
    const keys = (await from.client.call("CLUSTER", "GETKEYSINSLOT", String(slot), "100")) as string[];
    if (keys.length === 0) break;
    await from.client.call("MIGRATE", "127.0.0.1", String(to.port), "", "0", "5000", "KEYS", ...keys);
  }
  const masters: RedisProcess[] = [];
  for (const node of cluster.nodes) {
    const role = (await node.client.call("ROLE").catch(() => null)) as [string] | null;
    if (role?.[0] === "master") masters.push(node);
  }
  // The new owner first, then the old one (which then drops the slot's subscribers), then the rest.
  for (const node of [to, from, ...masters.filter((master) => master !== to && master !== from)]) {
    await node.client.call("CLUSTER", "SETSLOT", String(slot), "NODE", toId);
  }
}
