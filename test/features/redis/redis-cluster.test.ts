import { afterAll, beforeAll, expect, it } from "vitest";
import { type RunningWorkspace, startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import { describeWith, REDIS_SERVERS } from "../../helpers/external-programs.js";
import {
  chat,
  expectAnsweredThroughFailover,
  expectStateSharedAcrossReplicas,
  metricSum,
  type ProbeRead,
  readStoredResponsesUntil,
  respond,
  summarizeProbes,
} from "../../helpers/failover-scenario.js";
import { Redis } from "ioredis";
import { credentialHash } from "../../../src/auth/credential-hash.js";
import { keySlot } from "../../../src/redis/key-slot.js";
import { redisKeys } from "../../../src/redis/keys.js";
import { killNode, migrateSlot, type RedisClusterServers, type RedisProcess, startRedisCluster, until } from "../../helpers/redis-topologies.js";
import { API_KEY, FIXTURE_DOCUMENTS, type RunningAdapter, startAdapter } from "../../helpers/start-stack.js";

/** Publications each node received over the cluster bus, classic (`PUBLISH`) and sharded (`SPUBLISH`), from CLUSTER INFO. */
async function busCounters(cluster: RedisClusterServers): Promise<{ classic: number; sharded: number }[]> {
  return Promise.all(
    cluster.nodes.map(async (node) => {
      const info = String(await node.client.cluster("INFO"));
      const read = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, "m").exec(info)?.[1] ?? 0);
      return { classic: read("cluster_stats_messages_publish_received"), sharded: read("cluster_stats_messages_publishshard_received") };
    }),
  );
}

/** The bus publications of all live nodes, summed. */
async function busPublications(cluster: RedisClusterServers): Promise<{ classic: number; sharded: number }> {
  const counters = await busCounters(cluster);
  return counters.reduce((sum, node) => ({ classic: sum.classic + node.classic, sharded: sum.sharded + node.sharded }), { classic: 0, sharded: 0 });
}

describeWith(REDIS_SERVERS, "replicas sharing a Redis Cluster (3 masters, 3 replicas)", () => {
  let cluster: RedisClusterServers;
  let workspace: RunningWorkspace;
  let replicas: RunningAdapter[];
  const prefix = "cluster:";
  /** The gate's bound on one Redis command (the default, named here because the failover test measures against it). */
  const commandBoundMs = 1000;
  beforeAll(async () => {
    // Without full coverage required, the masters that live serve their slots while a dead one's replica takes over:
    // what a gate per node can use (with Redis's default, every master refuses every command meanwhile).
    // A node timeout of 5 s until the failover test: with Redis's 1 s, a node starved of CPU on a busy
    // machine misses its pings long enough for the cluster to fail it over on its own, and the commands
    // of that moment fall back. The failover test sets 1 s (what docs/scale-out.md reports) before its kill.
    cluster = await startRedisCluster({ requireFullCoverage: false, nodeTimeoutMs: 5000 });
    // Answers take about a second: long enough to be waiting when a master dies.
    workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], apiKeys: [API_KEY], stepDelayMs: 80 });
    // The state shared is checked to have every command answered, and the limits never to have fallen
    // back for want of an answer: a command may take 5 s here, as a healthy cluster on a busy machine can.
    replicas = await startReplicas(5000);
  }, 60_000);
  afterAll(async () => {
    await Promise.all((replicas ?? []).map((replica) => replica.close()));
    await workspace?.close();
    await cluster?.stop();
  });

  /** Three replicas sharing the cluster; `commandTimeoutMs` is `REDIS_COMMAND_TIMEOUT_MS` (default 1 s). */
  function startReplicas(commandTimeoutMs = 1000): Promise<RunningAdapter[]> {
    const environment = {
      ...cluster.environment,
      REDIS_KEY_PREFIX: prefix,
      REDIS_COMMAND_TIMEOUT_MS: String(commandTimeoutMs),
      CLUSTER_LEASE_MS: "1500",
      POLL_INTERVAL_MIN_MS: "100",
      POLL_INTERVAL_MAX_MS: "100",
      REALTIME: "off",
      // Limits high enough never to refuse, so that every request is counted in the cluster too.
      RATE_LIMIT_RPM: "100000",
      RATE_LIMIT_TPM: "100000000",
      RATE_LIMIT_CONCURRENT: "10000",
      // A quota's reservation and settlement, and usage's charges, are scripts too: each in one slot.
      RATE_LIMIT_TPD: "1000000000",
      USAGE_COUNTING: "on",
    };
    return Promise.all([0, 1, 2].map(() => startAdapter(workspace.url, environment)));
  }

  /**
   * 24 stored responses created on `storer` (their keys spread over the three masters), once every
   * write has ended and none was lost: a create answers once its write was answered or after the
   * bound, so on a busy machine a write may still be under way when the create returns, and a read
   * then would be a 404 that says nothing of a failover.
   */
  async function storedResponses(storer: RunningAdapter, input: (index: number) => string): Promise<string[]> {
    const writes = async (outcome: string) => (await metricSum([storer], "adapter_store_writes_total", { store: "response", outcome }))[0] as number;
    const ended = async () => (await writes("stored")) + (await writes("retried")) + (await writes("lost"));
    const [endedBefore, lostBefore] = [await ended(), await writes("lost")];
    const stored = await Promise.all(Array.from({ length: 24 }, (_, index) => respond(storer, { model: "ask", input: input(index) })));
    expect(stored.map((result) => result.status)).toEqual(Array(24).fill(200));
    await until(async () => (await ended()) - endedBefore >= 24, "the 24 writes to end");
    expect((await writes("lost")) - lostBefore).toBe(0);
    return stored.map((result) => result.body.id as string);
  }

  it("shares conversations, stored responses and rate limits across replicas, every command answered (no CROSSSLOT)", async () => {
    await until(async () => (await metricSum(replicas, "adapter_rate_limit_shared")).every((shared) => shared === 1), "the limits' connections");
    await expectStateSharedAcrossReplicas({ replicas, workspace });
    // The limits were counted in the cluster: never in process for an error reply (a CROSSSLOT) nor for a
    // node the gate counted down. A limits command has its own bound of 250 ms (an admission does not wait
    // longer), which a busy machine can pass now and then (once in a run beside two CPU-bound processes):
    // that is the design working, counted as `no_answer`, and not asked of this test.
    expect(await metricSum(replicas, "adapter_rate_limit_fallbacks_total", { reason: "error" })).toEqual([0, 0, 0]);
    expect(await metricSum(replicas, "adapter_rate_limit_fallbacks_total", { reason: "unavailable" })).toEqual([0, 0, 0]);
    const limitKeys = (await Promise.all(cluster.nodes.map((node) => node.client.keys(`${prefix}limit*`)))).flat();
    expect(limitKeys.length).toBeGreaterThan(0);
    expect(limitKeys.some((key) => key.includes(":tpd:"))).toBe(true);
    // Every usage charge written (its mark and the day's totals in one script, one slot), none lost.
    await until(async () => (await metricSum(replicas, "adapter_usage_writes_total", { outcome: "stored" })).some((stored) => stored > 0), "a usage charge written");
    expect(await metricSum(replicas, "adapter_usage_writes_total", { outcome: "lost" })).toEqual([0, 0, 0]);
    const day = new Date().toISOString().slice(0, 10);
    const [mark, totals] = [redisKeys(prefix).usageCharge(day, "c-1"), redisKeys(prefix).usageDay(day)];
    const slotOf = async (name: string) => Number(await (cluster.nodes[0] as RedisClusterServers["nodes"][number]).client.cluster("KEYSLOT", name));
    expect(await slotOf(mark)).toBe(await slotOf(totals));
    // The gate routes each key to its node by the slot Redis itself computes.
    const names = ["foo", `${prefix}response:resp_1`, redisKeys(prefix).pollLease("h:acme"), redisKeys(prefix).background("resp_2", "events")];
    const live = cluster.nodes[0] as RedisClusterServers["nodes"][number];
    expect(names.map(keySlot)).toEqual(await Promise.all(names.map(async (name) => Number(await live.client.cluster("KEYSLOT", name)))));
    // The keys spread over the masters: a response and its items are not tied to one slot.
    const holding = await Promise.all(cluster.nodes.map(async (node) => (await node.client.keys(`${prefix}*`)).length));
    expect(holding.filter((count) => count > 0).length).toBeGreaterThan(1);
  }, 60_000);

  it("shares one poller per workspace: only the lease holder lists for three replicas, as with one Redis", async () => {
    const calls = workspace.control.calls;
    const before = calls.list - calls.listWithCursor;
    const listedBefore = await metricSum(replicas, "adapter_watcher_list_calls_total");
    const acquiredBefore = await metricSum(replicas, "adapter_cluster_lease_changes_total", { change: "acquired" });
    const fallbacksBefore = await metricSum(replicas, "adapter_cluster_fallbacks_total");
    const started = performance.now();
    const results = await Promise.all(Array.from({ length: 90 }, (_, index) => chat(replicas[index % 3] as RunningAdapter, [{ role: "user", content: "leave policy" }])));
    const perInterval = (calls.list - calls.listWithCursor - before) / ((performance.now() - started) / 100);
    console.log(`Redis Cluster: ${perInterval.toFixed(2)} first-page list calls per 100 ms interval while 90 requests wait on three replicas`);
    expect(results.every((result) => result.status === 200)).toBe(true);
    // One poller for the three: only the lease holder listed, whatever the pace of the machine. Another
    // lists only after taking the lease over, or for a turn it counted as polled alone (Redis's answer
    // not there at once), either of which a busy machine may cause.
    const since = (now: number[], before: number[]) => now.map((count, index) => count - (before[index] as number));
    const listed = since(await metricSum(replicas, "adapter_watcher_list_calls_total"), listedBefore);
    const acquired = since(await metricSum(replicas, "adapter_cluster_lease_changes_total", { change: "acquired" }), acquiredBefore);
    const fellBack = since(await metricSum(replicas, "adapter_cluster_fallbacks_total"), fallbacksBefore);
    console.log(`Redis Cluster: list calls ${JSON.stringify(listed)}, leases acquired ${JSON.stringify(acquired)}, polls alone ${JSON.stringify(fellBack)} per replica`);
    const listers = listed.filter((count) => count > 0).length;
    expect(listers).toBeGreaterThan(0);
    expect(listers).toBeLessThanOrEqual(1 + acquired.reduce((sum, count) => sum + count, 0) + fellBack.filter((count) => count > 0).length);
    // The holder shared its snapshots with sharded pub/sub: no classic publication crossed the cluster bus.
    const bus = await busPublications(cluster);
    expect(bus.sharded).toBeGreaterThan(0);
    expect(bus.classic).toBe(0);
  }, 60_000);

  it("measures pub/sub in a cluster: a classic message reaches every node, a sharded one its shard's replica only", async () => {
    const publisher = new Redis.Cluster(cluster.nodes.slice(0, 3).map((node) => ({ host: "127.0.0.1", port: node.port })));
    const subscriber = new Redis.Cluster(cluster.nodes.slice(0, 3).map((node) => ({ host: "127.0.0.1", port: node.port })), { shardedSubscribers: true });
    try {
      const channel = "{measure}:snapshots";
      const text = JSON.stringify({ from: "replica", items: Array.from({ length: 10 }, () => ({ id: "q", status: "PROCESSING", output: "x".repeat(200), steps: [] })) });
      const count = 500;
      const rows: Record<string, { busMessages: number; nodesReached: number; p50Ms: number; p99Ms: number }> = {};
      for (const mode of ["classic", "sharded"] as const) {
        const received: number[] = [];
        const sent = new Map<number, number>();
        const onMessage = (_channel: string, message: string) => received.push(performance.now() - (sent.get(Number(message.slice(0, message.indexOf(":")))) ?? 0));
        subscriber.on(mode === "classic" ? "message" : "smessage", onMessage);
        await (mode === "classic" ? subscriber.subscribe(channel) : subscriber.ssubscribe(channel));
        const before = await busCounters(cluster);
        for (let index = 0; index < count; index += 1) {
          sent.set(index, performance.now());
          await (mode === "classic" ? publisher.publish(channel, `${index}:${text}`) : publisher.spublish(channel, `${index}:${text}`));
        }
        await until(async () => received.length === count, `${count} ${mode} messages`);
        // The bus carries each message on to the other nodes a moment after the subscriber has it.
        const busTotal = async () => (await busCounters(cluster)).reduce((sum, node) => sum + node[mode], 0);
        let previous = -1;
        for (let current = await busTotal(), reads = 0; current !== previous && reads < 50; reads += 1) {
          previous = current;
          await new Promise((resolve) => setTimeout(resolve, 100));
          current = await busTotal();
        }
        const after = await busCounters(cluster);
        const deltas = after.map((value, index) => value[mode] - (before[index] as { classic: number; sharded: number })[mode]);
        received.sort((a, b) => a - b);
        rows[mode] = {
          busMessages: deltas.reduce((sum, value) => sum + value, 0),
          nodesReached: deltas.filter((value) => value > 0).length,
          p50Ms: Number((received[Math.floor(count / 2)] as number).toFixed(2)),
          p99Ms: Number((received[Math.floor(count * 0.99)] as number).toFixed(2)),
        };
        subscriber.off(mode === "classic" ? "message" : "smessage", onMessage);
        await (mode === "classic" ? subscriber.unsubscribe(channel) : subscriber.sunsubscribe(channel));
      }
      console.log(`Pub/sub in a 6-node cluster, ${count} messages of ${text.length} bytes: ${JSON.stringify(rows)}`);
      // Classic: each message crosses the bus to every other node (five); sharded: to its shard's replica only.
      expect(rows.classic?.busMessages).toBe(5 * count);
      expect(rows.sharded?.busMessages).toBe(count);
      expect(rows.sharded?.nodesReached).toBe(1);
    } finally {
      publisher.disconnect();
      subscriber.disconnect();
    }
  }, 60_000);

  it("follows a resharding: the workspace's slot moved to another master, its channel is listened to there and the sharing goes on", async () => {
    const group = `${credentialHash(API_KEY)}:acme`;
    const channel = redisKeys(prefix).pollChannel(group);
    const from = await cluster.masterOf(channel);
    const to = (await Promise.all(cluster.nodes.map(async (node) => ({ node, role: (await node.client.call("ROLE")) as [string] })))).find(
      ({ node, role }) => role[0] === "master" && node !== from,
    )?.node as RedisProcess;
    /** Clients subscribed to the workspace's channel on `node` (sharded pub/sub). */
    const subscribers = async (node: RedisProcess) => Number(((await node.client.call("PUBSUB", "SHARDNUMSUB", channel)) as [string, number])[1]);

    // Questions wait on every replica all the while, three at a time a third of an answer apart, so
    // that no replica's group is left and joined again (which would subscribe afresh where the map says).
    let resharded = false;
    const statuses: number[] = [];
    const asking = Promise.all(
      replicas.flatMap((replica) =>
        [0, 1, 2].map(async (turn) => {
          await new Promise((resolve) => setTimeout(resolve, turn * 300));
          while (!resharded) statuses.push((await chat(replica, [{ role: "user", content: "leave policy" }])).status);
        }),
      ),
    );
    try {
      await until(async () => (await subscribers(from)) === 3, "the three replicas to listen on the slot's master");
      await migrateSlot(cluster, keySlot(channel), from, to);
      expect(await cluster.masterOf(channel)).toBe(to);
      await until(async () => (await subscribers(to)) === 3 && (await subscribers(from)) === 0, "the three subscriptions to follow the slot to its new master");
      // What the lease holder shares now goes through the new master and reaches the others.
      const receivedThere = await metricSum(replicas, "adapter_cluster_snapshots_received_total");
      await until(async () => {
        const held = await metricSum(replicas, "adapter_cluster_leases_held");
        const received = await metricSum(replicas, "adapter_cluster_snapshots_received_total");
        return received.some((count, index) => held[index] === 0 && count > (receivedThere[index] as number));
      }, "a snapshot shared through the slot's new master");
    } finally {
      resharded = true;
      await asking;
    }
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
  }, 60_000);

  it("answers every waiting request once when the master of the workspace's slot is killed, and shares again; reads of keys on other masters go on", async () => {
    // Replicas with the default Redis bound (1 s), as docs/scale-out.md reports the failover with.
    await Promise.all(replicas.map((replica) => replica.close()));
    replicas = await startReplicas(commandBoundMs);
    const [storer, ...readers] = replicas as [RunningAdapter, RunningAdapter, RunningAdapter];
    // Stored responses whose keys spread over the three masters (24: some needing the killed one and some not, nearly surely).
    const stored = await storedResponses(storer, (index) => `remote work ${index}`);
    // The master of the workspace's polling lease (and of its rate limits: one hash tag) is the one killed.
    const victim = await cluster.masterOf(redisKeys(prefix).pollLease(`${credentialHash(API_KEY)}:acme`));
    // A retrieve reads two keys: the background record of that id, then the stored response (each in its own slot).
    const keys = redisKeys(prefix);
    const responses = await Promise.all(
      stored.map(async (id) => {
        const owners = await Promise.all([keys.background(id, "record"), keys.response(id)].map((key) => cluster.masterOf(key)));
        return { id, keysOnFailedMaster: owners.filter((owner) => owner === victim).length };
      }),
    );
    expect(responses.some((response) => response.keysOnFailedMaster > 0)).toBe(true);
    expect(responses.some((response) => response.keysOnFailedMaster === 0)).toBe(true);

    // Their normal latency: the same reads with nothing failing, while 30 requests wait on the replicas as
    // they will through the kill (what "normal" means on this machine, printed beside the failover's).
    let answered = false;
    const normalReads = readStoredResponsesUntil(readers, responses, () => answered);
    const waiting = await Promise.all(Array.from({ length: 30 }, (_, index) => chat(replicas[index % 3] as RunningAdapter, [{ role: "user", content: "leave policy" }])));
    answered = true;
    const normal = summarizeProbes(await normalReads);
    expect(waiting.map((result) => result.status)).toEqual(Array(30).fill(200));
    expect(Object.keys(normal.otherMasters.statuses)).toEqual(["200"]);

    // The failover as docs/scale-out.md reports it: Redis's node timeout of 1 s on every node.
    await Promise.all(cluster.nodes.map((node) => node.client.config("SET", "cluster-node-timeout", String(commandBoundMs))));
    let failedOver = false;
    let probes: Promise<ProbeRead[]> = Promise.resolve([]);
    const measure = await expectAnsweredThroughFailover({ replicas, workspace }, async () => {
      // The lease is held now, on that master and on its replica.
      const leases = new Set((await Promise.all(cluster.nodes.map((node) => node.client.keys(`${prefix}*:lease`).catch(() => [] as string[])))).flat());
      expect(await Promise.all([...leases].map((lease) => cluster.masterOf(lease)))).toEqual([victim]);
      await killNode(victim);
      probes = readStoredResponsesUntil(readers, responses, () => failedOver);
    });
    failedOver = true;
    const reads = await probes;
    const summary = summarizeProbes(reads);
    console.log(`Redis Cluster, the same reads with nothing failing (live masters' keys; all): ${JSON.stringify(normal.otherMasters)}; ${JSON.stringify(normal.failedMaster)}`);
    console.log(`Redis Cluster, master killed: ${JSON.stringify(measure)}; stored responses read meanwhile (bound ${commandBoundMs} ms; reads on live masters at or over it: ${reads.filter((read) => read.keysOnFailedMaster === 0 && read.ms >= commandBoundMs).length}): ${JSON.stringify(summary)}`);
    // No read fails with an error of the adapter's own (a 500): found, a 503 to send again, or (a key
    // lost with its master, as asynchronous replication allows) not found.
    expect(reads.filter((read) => ![200, 404, 503].includes(read.status))).toEqual([]);
    // Keys on the live masters are still served while the killed one's replica takes over: never refused
    // without waiting for their own master. One gate for the whole cluster refused such reads at once (24
    // of 252), and so did a gate per node that took timeouts coming together on a loaded machine for an
    // outage of a live master (82 of 168, p50 91 ms). A 503 that came only after the whole bound is the bound
    // itself: on a loaded machine any command may miss it, wherever its key lives (times printed above).
    const others = reads.filter((read) => read.keysOnFailedMaster === 0);
    expect(others.filter((read) => read.status === 200).length).toBeGreaterThan(0);
    // Every write had ended, none lost, before the kill: a 404 for a key on a live master is never a lost
    // write. In some runs such reads still answer 404 (8 of 56 in one, 9 of 36 in another) for keys that are
    // there when read again afterwards, with their first TTL; why the read found nothing is not known yet
    // (docs/scale-out.md#in-a-failover).
    const notFound = [...new Set(others.filter((read) => read.status === 404).map((read) => read.id))];
    if (notFound.length > 0) {
      const probe = new Redis.Cluster(cluster.nodes.filter((node) => node !== victim).map((node) => ({ host: "127.0.0.1", port: node.port })));
      try {
        expect(await Promise.all(notFound.map((id) => probe.exists(keys.response(id))))).toEqual(notFound.map(() => 1));
      } finally {
        probe.disconnect();
      }
    }
    expect(others.filter((read) => read.status === 503 && read.ms < commandBoundMs)).toEqual([]);
  }, 120_000);
});
