import { spawn } from "node:child_process";
import { Redis } from "ioredis";
import pino from "pino";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWith, OPENSSL, REDIS_SERVERS } from "../../helpers/external-programs.js";
import { freePort } from "../../helpers/redis-server.js";
import { killNode, type RedisProcess, startRedisCluster, until } from "../../helpers/redis-topologies.js";
import { type Replica, startReplica, stopAll } from "../../helpers/replica-process.js";
import { makeCertificates, redisTlsArguments } from "../../helpers/test-certificates.js";
import { headers, type Stack, startAdapter, startStack } from "../../helpers/start-stack.js";

type Message = { role: string; content: string };

/** A chat turn: status and the query it went to. */
async function ask(url: string, messages: Message[]) {
  const response = await fetch(`${url}/v1/chat/completions`, { method: "POST", headers: headers(), body: JSON.stringify({ model: "ask", messages }) });
  const body = (await response.json()) as any;
  return { status: response.status, queryId: response.headers.get("service-query-id"), content: (body.choices?.[0]?.message.content ?? "") as string };
}

/** A first turn on one adapter, then its follow-up on another: whether the second continued the first's query. */
async function continuesAcross(first: string, second: string): Promise<boolean> {
  const history: Message[] = [{ role: "user", content: "How much annual leave do I get?" }];
  const one = await ask(first, history);
  expect(one.status).toBe(200);
  const two = await ask(second, [...history, { role: "assistant", content: one.content }, { role: "user", content: "Does it carry over?" }]);
  expect(two.status).toBe(200);
  return two.queryId === one.queryId;
}

/** A redis-server with these arguments on a free loopback port (no persistence), not waited for. */
function spawnRedis(port: number, args: string[]): Pick<RedisProcess, "port" | "child"> {
  const child = spawn("redis-server", ["--bind", "127.0.0.1", "--save", "", "--appendonly", "no", ...args], { stdio: "ignore" });
  return { port, child };
}

/** Whether a replica's Redis connection is up (its metrics say so). */
async function redisAvailable(replica: Replica): Promise<boolean> {
  return /^adapter_redis_available 1$/m.test(await (await fetch(`${replica.url}/metrics`)).text());
}

/** Snapshots a replica heard from the lease holder of its workspace (its metrics say so). */
async function snapshotsReceived(replica: Replica): Promise<number> {
  const metrics = await (await fetch(`${replica.url}/metrics`)).text();
  return Number(/^adapter_cluster_snapshots_received_total (\d+)$/m.exec(metrics)?.[1] ?? 0);
}

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

describeWith(REDIS_SERVERS, "Redis with an ACL user and a password", () => {
  it("shares conversations with the right credentials, and keeps answering (never forking) with wrong ones, the password in no log", async () => {
    const port = await freePort();
    const redis = spawnRedis(port, ["--port", String(port), "--user", "default", "off", "--user", "adapter", "on", ">s3cret-pw", "~*", "&*", "+@all"]);
    const logs: string[] = [];
    const logger = pino({ level: "debug" }, { write: (line: string) => logs.push(line) });
    try {
      const probe = new Redis({ port, host: "127.0.0.1", username: "adapter", password: "s3cret-pw", lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => 50 });
      probe.on("error", () => undefined);
      await until(async () => {
        if (probe.status === "wait") await probe.connect();
        return (await probe.ping()) === "PONG";
      }, "the ACL Redis");
      probe.disconnect();
      const environment = { REDIS_URL: `redis://127.0.0.1:${port}`, REDIS_USERNAME: "adapter", REDIS_PASSWORD: "s3cret-pw", REDIS_KEY_PREFIX: "acl:" };
      const [first, second] = await Promise.all([startAdapter(stack.workspace.url, environment, logger), startAdapter(stack.workspace.url, environment, logger)]);
      const wrong = await startAdapter(stack.workspace.url, { ...environment, REDIS_PASSWORD: "not-the-password" }, logger);
      try {
        expect(await continuesAcross(first.url, second.url)).toBe(true);
        // Refused by Redis: new questions are answered, a follow-up it cannot look up is refused, not forked.
        const fresh = await ask(wrong.url, [{ role: "user", content: "remote work" }]);
        expect(fresh.status).toBe(200);
        const followUp = await ask(wrong.url, [{ role: "user", content: "remote work" }, { role: "assistant", content: "An answer from elsewhere." }, { role: "user", content: "more?" }]);
        expect(followUp.status).toBe(503);
      } finally {
        await Promise.all([first.close(), second.close(), wrong.close()]);
      }
      expect(logs.join("\n")).not.toContain("s3cret-pw");
      expect(logs.join("\n")).not.toContain("not-the-password");
      expect(logs.join("\n")).toContain("redis://127.0.0.1:"); // where Redis is, without the credentials
    } finally {
      await killNode(redis);
    }
  });
});

describeWith(REDIS_SERVERS, "Redis over TLS", () => describeWith(OPENSSL, "with a CA of the test's own", () => {
  it("shares conversations over rediss:// with the certificate checked against the hostname; an unknown CA is refused", async () => {
    const certificates = makeCertificates();
    const port = await freePort();
    const redis = spawnRedis(port, redisTlsArguments(port, certificates));
    const environment = { REDIS_URL: `rediss://localhost:${port}`, REDIS_KEY_PREFIX: "tls:", DEFAULT_WORKSPACE: "acme", REALTIME: "off" };
    const replicas: Replica[] = [];
    try {
      const trusting = { ...environment, NODE_EXTRA_CA_CERTS: certificates.ca };
      replicas.push(await startReplica(stack.workspace.url, trusting), await startReplica(stack.workspace.url, trusting));
      await until(async () => (await redisAvailable(replicas[0] as Replica)) && (await redisAvailable(replicas[1] as Replica)), "the replicas' TLS connections");
      expect(await continuesAcross(replicas[0]?.url as string, replicas[1]?.url as string)).toBe(true);
      // Without the CA the certificate is not trusted: no connection, and the replica says so in its metrics.
      const untrusting = await startReplica(stack.workspace.url, environment);
      replicas.push(untrusting);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(await redisAvailable(untrusting)).toBe(false);
      expect((await ask(untrusting.url, [{ role: "user", content: "remote work" }])).status).toBe(200);
    } finally {
      await stopAll(replicas);
      await killNode(redis);
      certificates.remove();
    }
  }, 60_000);
}));

describeWith(REDIS_SERVERS, "a TLS Redis Cluster announced by hostname (ElastiCache's TLS pattern)", () => describeWith(OPENSSL, "with a CA of the test's own", () => {
  it("shares conversations with REDIS_TLS=on, the certificate checked against the nodes' names; addresses are refused", async () => {
    const certificates = makeCertificates();
    const cluster = await startRedisCluster({ tls: certificates });
    const replicas: Replica[] = [];
    try {
      const environment: Record<string, string> = { ...cluster.environment, REDIS_KEY_PREFIX: "tls-cluster:", DEFAULT_WORKSPACE: "acme", REALTIME: "off", NODE_EXTRA_CA_CERTS: certificates.ca };
      expect(environment).toMatchObject({ REDIS_TLS: "on", REDIS_CLUSTER_NODES: expect.stringMatching(/^localhost:\d+,localhost:\d+,localhost:\d+$/) });
      replicas.push(await startReplica(stack.workspace.url, environment), await startReplica(stack.workspace.url, environment));
      await until(async () => (await redisAvailable(replicas[0] as Replica)) && (await redisAvailable(replicas[1] as Replica)), "the replicas' TLS cluster connections");
      expect(await continuesAcross(replicas[0]?.url as string, replicas[1]?.url as string)).toBe(true);
      // The polling is shared over TLS too: the lease holder's snapshots reach the other replica on the
      // sharded subscription it holds on the channel's master, by that master's name. Whether one round of
      // questions overlaps the lease holder's polls depends on the machine's speed, so rounds go on until
      // a snapshot has been shared (as the plain cluster's test keeps asking).
      const statuses: number[] = [];
      await until(async () => {
        const questions = replicas.flatMap((replica) => Array.from({ length: 6 }, () => ask(replica.url, [{ role: "user", content: "leave policy" }])));
        statuses.push(...(await Promise.all(questions)).map((answer) => answer.status));
        return (await Promise.all(replicas.map((replica) => snapshotsReceived(replica)))).some((received) => received > 0);
      }, "a snapshot shared between the replicas over TLS");
      expect(statuses.length).toBeGreaterThanOrEqual(12);
      expect(statuses.filter((status) => status !== 200)).toEqual([]);
      // The same nodes by address: the certificate names localhost only, so the check refuses them.
      const byAddress = await startReplica(stack.workspace.url, { ...environment, REDIS_CLUSTER_NODES: String(environment.REDIS_CLUSTER_NODES).replaceAll("localhost", "127.0.0.1") });
      replicas.push(byAddress);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(await redisAvailable(byAddress)).toBe(false);
      expect((await ask(byAddress.url, [{ role: "user", content: "remote work" }])).status).toBe(200);
    } finally {
      await stopAll(replicas);
      await cluster.stop();
      certificates.remove();
    }
  }, 90_000);
}));
