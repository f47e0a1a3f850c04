import { expect } from "vitest";
import type { RunningWorkspace } from "../../src/embedded-workspace/start-embedded-workspace.js";
import { API_KEY, headers, type RunningAdapter } from "./start-stack.js";
import { waitFor } from "./wait-for.js";

/** What the failover suites (Redis Cluster, Sentinel) run against: three replicas sharing one Redis. */
export interface SharedRedisReplicas {
  replicas: RunningAdapter[];
  workspace: RunningWorkspace;
}

type Message = { role: string; content: string };

/** A chat turn against a replica: status, content, query id, and how long it took. */
export async function chat(replica: RunningAdapter, messages: Message[], extraHeaders: Record<string, string> = {}) {
  const started = performance.now();
  const response = await fetch(`${replica.url}/v1/chat/completions`, { method: "POST", headers: headers(extraHeaders), body: JSON.stringify({ model: "ask", messages }) });
  const body = (await response.json()) as any;
  return {
    status: response.status,
    body,
    content: (body.choices?.[0]?.message.content ?? "") as string,
    queryId: response.headers.get("service-query-id"),
    ms: performance.now() - started,
  };
}

/** A Responses API call against a replica. */
export async function respond(replica: RunningAdapter, body: Record<string, unknown>) {
  const response = await fetch(`${replica.url}/v1/responses`, { method: "POST", headers: headers(), body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as any, queryId: response.headers.get("service-query-id") };
}

/** The sum over replicas of a metric's samples (all label sets), read from each one's registry. */
export async function metricSum(replicas: RunningAdapter[], name: string, labels: Record<string, string> = {}): Promise<number[]> {
  return Promise.all(
    replicas.map(async (replica) => {
      const metric = replica.adapter.metrics.registry.getSingleMetric(name);
      if (!metric) return 0;
      const values = (await metric.get()).values as { value: number; labels: Record<string, unknown>; metricName?: string }[];
      return values
        .filter((value) => (value.metricName === undefined || value.metricName === name || value.metricName === `${name}_count`))
        .filter((value) => Object.entries(labels).every(([key, expected]) => value.labels[key] === expected))
        .reduce((sum, value) => sum + value.value, 0);
    }),
  );
}

/**
 * Conversations and stored responses across the replicas, each turn on another one: a history,
 * a conversation id, a `previous_response_id` chain, an `item_reference`, retrieval and deletion.
 * Every Redis command is answered: no error reply (a `CROSSSLOT` in a cluster) and no failure.
 */
export async function expectStateSharedAcrossReplicas({ replicas }: SharedRedisReplicas): Promise<void> {
  const [a, b, c] = replicas as [RunningAdapter, RunningAdapter, RunningAdapter];
  const unanswered = () =>
    Promise.all([
      metricSum(replicas, "adapter_redis_command_duration_seconds", { outcome: "error" }),
      metricSum(replicas, "adapter_redis_command_duration_seconds", { outcome: "failed" }),
    ]);
  const before = await unanswered();
  // Three conversations at once, each turn on another replica.
  const byHistory = async () => {
    const history: Message[] = [{ role: "user", content: "How much annual leave do I get?" }];
    const ids: (string | null)[] = [];
    for (const replica of [a, b]) {
      const turn = await chat(replica, history);
      expect(turn.status, JSON.stringify(turn.body)).toBe(200);
      ids.push(turn.queryId);
      history.push({ role: "assistant", content: turn.content }, { role: "user", content: `And more, turn ${ids.length + 1}?` });
    }
    expect(new Set(ids).size).toBe(1);
  };
  const byHeader = async () => {
    const ids: (string | null)[] = [];
    const conversationId = `failover-${a.url}-${Date.now()}`;
    for (const [index, replica] of [b, c].entries()) {
      const turn = await chat(replica, [{ role: "user", content: `remote work ${index}` }], { "x-conversation-id": conversationId });
      ids.push(turn.queryId);
    }
    expect(new Set(ids).size).toBe(1);
  };
  const byStoredResponses = async () => {
    const first = await respond(a, { model: "ask", input: "What are the password rules?" });
    expect(first.status).toBe(200);
    const message = first.body.output.find((item: { type: string }) => item.type === "message");
    const [second, referenced] = await Promise.all([
      respond(b, { model: "ask", input: "And for laptops?", previous_response_id: first.body.id }),
      respond(c, { model: "ask", input: [{ type: "item_reference", id: message.id }, { role: "user", content: "Really?" }] }),
    ]);
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.queryId).toBe(first.queryId);
    expect(referenced.status, JSON.stringify(referenced.body)).toBe(200);
    expect(referenced.queryId).toBe(first.queryId);
    const auth = { authorization: `Bearer ${API_KEY}` };
    expect((await fetch(`${c.url}/v1/responses/${second.body.id}`, { headers: auth })).status).toBe(200);
    expect((await fetch(`${a.url}/v1/responses/${first.body.id}/input_items`, { headers: auth })).status).toBe(200);
    expect((await fetch(`${b.url}/v1/responses/${first.body.id}`, { method: "DELETE", headers: auth })).status).toBe(200);
    expect((await fetch(`${c.url}/v1/responses/${first.body.id}`, { headers: auth })).status).toBe(404);
  };
  await Promise.all([byHistory(), byHeader(), byStoredResponses()]);

  expect(await unanswered()).toEqual(before);
}

/** The workspace's list of queries as the upstream holds them: id → output. */
async function upstreamOutputs(workspace: RunningWorkspace): Promise<Map<string, string>> {
  const outputs = new Map<string, string>();
  let cursor: string | null = null;
  do {
    const url = `${workspace.url}/queries?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
    const page = (await (await fetch(url, { headers: headers() })).json()) as { data: { id: string; output: string }[]; next_cursor: string | null };
    for (const item of page.data) outputs.set(item.id, item.output);
    cursor = page.next_cursor;
  } while (cursor);
  return outputs;
}

/** What a failover did to the requests waiting through it, and how long sharing took to resume. */
export interface FailoverMeasure {
  requests: number;
  /** Median and largest time of the requests that waited through the failure, and of the same requests without one. */
  medianMs: number;
  maxMs: number;
  baselineMedianMs: number;
  baselineMaxMs: number;
  /** From the failure until one replica holds the lease again and another receives what it shares. */
  sharingAgainMs: number;
}

const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)] as number;

/**
 * Requests waiting in one workspace across the replicas while `fail` breaks the Redis they share
 * (kills or hangs the master of the workspace's keys): every request is answered once, whole (its
 * content is the upstream's output of its own query, created once), exactly one replica holds the
 * lease again, and what it shares reaches the others. Measured against the same requests without
 * a failure.
 */
export async function expectAnsweredThroughFailover(
  { replicas, workspace }: SharedRedisReplicas,
  fail: () => Promise<void>,
  count = 30,
): Promise<FailoverMeasure> {
  const round = () =>
    Promise.all(Array.from({ length: count }, (_, index) => chat(replicas[index % replicas.length] as RunningAdapter, [{ role: "user", content: index % 2 ? "leave policy" : "password rules" }])));
  const baseline = await round();
  expect(baseline.map((result) => result.status)).toEqual(Array(count).fill(200));

  const pending = round();
  // Every replica is waiting and one of them holds the lease before the failure (waited for: a busy
  // machine takes longer to get there, and the answers take a second or more).
  await waitFor(
    async () =>
      replicas.every((replica) => replica.adapter.watcher.waitingQueries > 0) &&
      (await metricSum(replicas, "adapter_cluster_leases_held")).reduce((sum, held) => sum + held, 0) === 1,
    "every replica waiting, and one lease held",
  );
  const receivedBefore = await metricSum(replicas, "adapter_cluster_snapshots_received_total");
  const failedAt = performance.now();
  await fail();
  const results = await pending;
  expect(results.map((result) => result.status)).toEqual(Array(count).fill(200));
  const outputs = await upstreamOutputs(workspace);
  const ids = results.map((result) => result.queryId as string);
  expect(new Set(ids).size).toBe(count);
  for (const [index, result] of results.entries()) {
    expect(result.content, `request ${index}`).toBe(outputs.get(ids[index] as string));
    expect(workspace.control.creates.filter((create) => create.body.id === ids[index])).toHaveLength(1);
  }

  // Sharing again: while requests wait (a new batch whenever one is answered), one replica holds the
  // lease and another hears what it shares.
  const batches: Promise<{ status: number }[]>[] = [];
  let inFlight: Promise<unknown> | null = null;
  let sharingAgainMs = Number.NaN;
  const deadline = Date.now() + 60_000; // generous: a failover on a busy machine takes seconds
  let last = "";
  while (Date.now() < deadline) {
    if (!inFlight) {
      const batch = Promise.all(Array.from({ length: count }, (_, index) => chat(replicas[index % replicas.length] as RunningAdapter, [{ role: "user", content: "remote work" }])));
      batches.push(batch);
      inFlight = batch.finally(() => (inFlight = null));
    }
    const held = await metricSum(replicas, "adapter_cluster_leases_held");
    const received = await metricSum(replicas, "adapter_cluster_snapshots_received_total");
    last = `leases held ${held.join(",")}; snapshots received ${received.join(",")} (before the failure ${receivedBefore.join(",")})`;
    const heard = received.some((value, index) => held[index] === 0 && value > (receivedBefore[index] as number));
    if (held.reduce((sum, value) => sum + value, 0) === 1 && heard) {
      sharingAgainMs = performance.now() - failedAt;
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  expect(Number.isFinite(sharingAgainMs), `sharing resumed: ${last}`).toBe(true);
  for (const batch of await Promise.all(batches)) expect(batch.every((result) => result.status === 200)).toBe(true);
  const times = results.map((result) => result.ms);
  const baselineTimes = baseline.map((result) => result.ms);
  return {
    requests: count,
    medianMs: Math.round(median(times)),
    maxMs: Math.round(Math.max(...times)),
    baselineMedianMs: Math.round(median(baselineTimes)),
    baselineMaxMs: Math.round(Math.max(...baselineTimes)),
    sharingAgainMs: Math.round(sharingAgainMs),
  };
}

/** One read of a stored response during a failover: how many of the keys it reads are on the failed master, the status, and the time. */
export interface ProbeRead {
  /** The stored response read. */
  id: string;
  keysOnFailedMaster: number;
  status: number;
  ms: number;
}

/** The reads of each kind, with their statuses and the median, 99th percentile and largest time, for printing. */
export function summarizeProbes(reads: ProbeRead[]) {
  const summary = (kind: ProbeRead[]) => {
    const times = kind.map((read) => read.ms).sort((x, y) => x - y);
    const at = (share: number) => Math.round(times[Math.min(times.length - 1, Math.floor(times.length * share))] ?? Number.NaN);
    const statuses: Record<number, number> = {};
    for (const read of kind) statuses[read.status] = (statuses[read.status] ?? 0) + 1;
    return { reads: kind.length, statuses, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: Math.round(times.at(-1) ?? Number.NaN) };
  };
  return {
    otherMasters: summary(reads.filter((read) => read.keysOnFailedMaster === 0)),
    failedMaster: summary(reads.filter((read) => read.keysOnFailedMaster > 0)),
  };
}

/**
 * Reads stored responses over and over from `readers` (replicas that did not store them, so no
 * replica's own memory stands in) until `stop` says so, each read's keys on the failed master or on
 * others. What a gate per node is for: reads whose keys are on live masters go on as before.
 */
export async function readStoredResponsesUntil(
  readers: RunningAdapter[],
  responses: { id: string; keysOnFailedMaster: number }[],
  stop: () => boolean,
): Promise<ProbeRead[]> {
  const reads: ProbeRead[] = [];
  const auth = { authorization: `Bearer ${API_KEY}` };
  do {
    await Promise.all(
      responses.map(async ({ id, keysOnFailedMaster }, index) => {
        const started = performance.now();
        const response = await fetch(`${(readers[index % readers.length] as RunningAdapter).url}/v1/responses/${id}`, { headers: auth });
        await response.arrayBuffer();
        reads.push({ id, keysOnFailedMaster, status: response.status, ms: performance.now() - started });
      }),
    );
  } while (!stop());
  return reads;
}
