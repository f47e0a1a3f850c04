import { afterAll, beforeAll, expect, it } from "vitest";
import { type RunningWorkspace, startEmbeddedWorkspace } from "../../src/embedded-workspace/start-embedded-workspace.js";
import { describeWith, REDIS } from "../helpers/external-programs.js";
import { expectAnsweredThroughFailover, expectStateSharedAcrossReplicas } from "../helpers/failover-scenario.js";
import { killNode, type RedisClusterServers, startRedisCluster } from "../helpers/redis-topologies.js";
import { API_KEY, FIXTURE_DOCUMENTS, type RunningAdapter, startAdapter } from "../helpers/start-stack.js";

describeWith(REDIS, "replicas sharing a Redis Cluster (3 masters, 3 replicas)", () => {
  let cluster: RedisClusterServers;
  let workspace: RunningWorkspace;
  let replicas: RunningAdapter[];
  const prefix = "cluster:";
  beforeAll(async () => {
    cluster = await startRedisCluster();
    // Answers take about a second: long enough to be waiting when a master dies.
    workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], apiKeys: [API_KEY], stepDelayMs: 80 });
    const environment = { ...cluster.environment, REDIS_KEY_PREFIX: prefix, CLUSTER_LEASE_MS: "1500", POLL_INTERVAL_MIN_MS: "100", POLL_INTERVAL_MAX_MS: "100", REALTIME: "off" };
    replicas = await Promise.all([0, 1, 2].map(() => startAdapter(workspace.url, environment)));
  }, 60_000);
  afterAll(async () => {
    await Promise.all((replicas ?? []).map((replica) => replica.close()));
    await workspace?.close();
    await cluster?.stop();
  });

  it("shares conversations and stored responses across replicas, every command answered (no CROSSSLOT)", async () => {
    await expectStateSharedAcrossReplicas({ replicas, workspace });
    // The keys spread over the masters: a response and its items are not tied to one slot.
    const holding = await Promise.all(cluster.nodes.map(async (node) => (await node.client.keys(`${prefix}*`)).length));
    expect(holding.filter((count) => count > 0).length).toBeGreaterThan(1);
  }, 60_000);

  it("answers every waiting request once when the master of the workspace's slot is killed, and shares again", async () => {
    const measure = await expectAnsweredThroughFailover({ replicas, workspace }, async () => {
      // A lease key is on its master and on that master's replica.
      const leases = new Set((await Promise.all(cluster.nodes.map((node) => node.client.keys(`${prefix}*:lease`).catch(() => [] as string[])))).flat());
      expect(leases.size).toBe(1);
      await killNode(await cluster.masterOf([...leases][0] as string));
    });
    console.log(`Redis Cluster, master killed: ${JSON.stringify(measure)}`);
  }, 90_000);
});
