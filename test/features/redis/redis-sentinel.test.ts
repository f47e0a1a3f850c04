import pino from "pino";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type RunningWorkspace, startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import { describeWith, REDIS_SERVERS } from "../../helpers/external-programs.js";
import { chat, expectAnsweredThroughFailover, expectStateSharedAcrossReplicas, metricSum } from "../../helpers/failover-scenario.js";
import { killNode, type RedisSentinelServers, startDelayingProxy, startRedisSentinel, until } from "../../helpers/redis-topologies.js";
import { API_KEY, FIXTURE_DOCUMENTS, type RunningAdapter, startAdapter } from "../../helpers/start-stack.js";

/** What each replica's Redis connection did, for a failed test: its Redis metrics, and each distinct log message with its count and first and last time. */
async function diagnosis(replicas: RunningAdapter[], logs: string[]): Promise<string> {
  const lines: string[] = [];
  for (const [index, replica] of replicas.entries()) {
    const metrics = (await (await fetch(`${replica.url}/metrics`)).text()).split("\n").filter((line) => /^adapter_(redis|cluster)_/.test(line) && !line.includes("_bucket"));
    lines.push(`replica ${index}:`, ...metrics.map((line) => `  ${line}`));
  }
  const messages = new Map<string, { count: number; first: number; last: number }>();
  for (const line of logs) {
    const [replica, json] = [line.slice(0, line.indexOf(" ")), line.slice(line.indexOf(" ") + 1)];
    const entry = JSON.parse(json) as { msg: string; time: number };
    if (entry.msg === "request") continue;
    const key = `${replica} ${entry.msg}`;
    const seen = messages.get(key) ?? { count: 0, first: entry.time, last: entry.time };
    messages.set(key, { count: seen.count + 1, first: seen.first, last: entry.time });
  }
  const start = Math.min(...[...messages.values()].map((seen) => seen.first));
  for (const [key, seen] of messages) lines.push(`${key}: ${seen.count}× from +${seen.first - start} ms to +${seen.last - start} ms`);
  return lines.join("\n");
}

describeWith(REDIS_SERVERS, "replicas sharing a Sentinel-watched Redis (master, replica, three sentinels)", () => {
  let servers: RedisSentinelServers;
  let workspace: RunningWorkspace;
  let replicas: RunningAdapter[];
  const logs: string[] = [];
  beforeEach(async () => {
    servers = await startRedisSentinel();
    workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], apiKeys: [API_KEY], stepDelayMs: 80 });
    logs.length = 0;
    replicas = [];
  }, 60_000);

  /**
   * Three replicas sharing the Sentinel-watched Redis. `commandTimeoutMs`: how long a command may take
   * before it counts as failed (`REDIS_COMMAND_TIMEOUT_MS`, default 1 s).
   */
  async function startReplicas(commandTimeoutMs = 1000): Promise<void> {
    const environment = {
      ...servers.environment,
      REDIS_KEY_PREFIX: "sentinel:",
      REDIS_COMMAND_TIMEOUT_MS: String(commandTimeoutMs),
      CLUSTER_LEASE_MS: "1500",
      POLL_INTERVAL_MIN_MS: "100",
      POLL_INTERVAL_MAX_MS: "100",
      REALTIME: "off",
    };
    replicas = await Promise.all([0, 1, 2].map((index) => startAdapter(workspace.url, environment, pino({ level: "info" }, { write: (line: string) => logs.push(`${index} ${line}`) }))));
  }
  afterEach(async (context) => {
    if (context.task.result?.state === "fail") console.log(await diagnosis(replicas, logs));
    await Promise.all((replicas ?? []).map((replica) => replica.close()));
    await workspace?.close();
    await servers?.stop();
  });

  /** The sentinels have promoted the replica. */
  const promoted = () => until(async () => (await servers.currentMasterPort()) === servers.replica.port, "the sentinels to promote the replica");

  it("shares state, and answers every waiting request once when the master is killed", async () => {
    // The state shared is checked to have every command answered: a command may take 5 s here, as a
    // healthy Redis on a busy machine can (the lost connection is known at once: the bound is not spent).
    await startReplicas(5000);
    await expectStateSharedAcrossReplicas({ replicas, workspace });
    const measure = await expectAnsweredThroughFailover({ replicas, workspace }, async () => {
      await killNode(servers.master);
      await promoted();
    });
    console.log(`Sentinel, master killed: ${JSON.stringify(measure)}`);
    // The state written before the failover was replicated: it is still shared.
    await expectStateSharedAcrossReplicas({ replicas, workspace });
  }, 90_000);

  it("answers every waiting request once when the master hangs (SIGSTOP), and shares again", async () => {
    await startReplicas();
    const measure = await expectAnsweredThroughFailover({ replicas, workspace }, async () => {
      servers.master.child.kill("SIGSTOP");
      await promoted();
    });
    console.log(`Sentinel, master hung: ${JSON.stringify(measure)}`);
    expect(measure.sharingAgainMs).toBeGreaterThan(0);
  }, 90_000);

  it("uses the new master after a failover the sentinels announce while the replica is asking them for the master", async () => {
    // Every sentinel answers a second late (a busy machine, a distant network), so the promotion is
    // announced while the replica, its master gone, is still asking a sentinel where the master is.
    // ioredis then gives the connection up for good; the replica must open it again itself.
    const proxies = await Promise.all(servers.sentinels.map((sentinel) => startDelayingProxy(sentinel.port, 1000)));
    try {
      const environment = { ...servers.environment, REDIS_SENTINELS: proxies.map((proxy) => `127.0.0.1:${proxy.port}`).join(","), REDIS_KEY_PREFIX: "slow-sentinels:", REALTIME: "off" };
      replicas = [await startAdapter(workspace.url, environment, pino({ level: "info" }, { write: (line: string) => logs.push(`0 ${line}`) }))];
      const available = async () => ((await metricSum(replicas, "adapter_redis_available"))[0] as number) === 1;
      await until(available, "the replica's first connection");
      await killNode(servers.master);
      await promoted();
      await until(available, "the replica to use the promoted master", 30_000);
      // It had known the master lost (not a connection that never noticed the kill).
      expect(await metricSum(replicas, "adapter_redis_availability_changes_total", { state: "down" })).toEqual([1]);
      // It writes there: a conversation turn reaches the promoted master.
      expect((await chat(replicas[0] as RunningAdapter, [{ role: "user", content: "leave policy" }])).status).toBe(200);
      await until(async () => (await servers.replica.client.keys("slow-sentinels:*")).length > 0, "a turn stored on the promoted master");
    } finally {
      await Promise.all(proxies.map((proxy) => proxy.close()));
    }
  }, 90_000);
});
