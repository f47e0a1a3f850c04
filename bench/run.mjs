// `npm run bench`: how much the adapter adds between a client and the workspace, measured side by
// side with the upstream called directly and a bare node:http pass-through proxy, on loopback only.
// Writes bench/results/node-<major>.json (one per Node version) and docs/benchmarks.md (bench/page.mjs)
// from every Node version's results. Knobs: BENCH_NODES (a Node binary or several: the run under each
// in turn), BENCH_SECONDS (per run, default 5), BENCH_REPEATS (default 3; medians are reported),
// BENCH_ONLY (one part, nothing written unless BENCH_MERGE=1 merges it into this Node's results),
// BENCH_DOCS_ONLY=1 (the page again from the results kept).
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { fileURLToPath, pathToFileURL } from "node:url";
import autocannon from "autocannon";
import { Agent, request } from "undici";
import { adapterEnvironment, holdOpen, startProcess, startWorkspaceAndAdapter, statsOf } from "./processes.mjs";
import { channelStreams, realtimeLatency } from "./realtime.mjs";
import { slowRedis } from "./redis-latency.mjs";
import { rateLimitCost } from "./rate-limits.mjs";
import { governanceCost } from "./governance.mjs";
import { ownershipCost } from "./ownership.mjs";
import { quotaCost } from "./quotas.mjs";
import { replicaPolling } from "./replicas.mjs";
import { tracingCost } from "./tracing.mjs";
import { toolCallCost, waitingToolCalls } from "./mcp.mjs";
import { cpuPerRequest } from "./cpu.mjs";
import { oauthCost } from "./oauth.mjs";
import { chatUiTaskCost } from "./chat-ui-tasks.mjs";
import { schemaWorstCases, structuredCost } from "./structured.mjs";
import { backgroundCost } from "./background.mjs";
import { clusterFailover } from "./cluster-failover.mjs";
import { majorOf, readResults, writePage } from "./page.mjs";
import { tokenCounting } from "./tokens.mjs";
import { webSocketCost } from "./websocket.mjs";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const here = new URL(".", import.meta.url);
const children = [];

/** Starts a server process and remembers it, so that every one is stopped at the end. */
async function start(file, env = {}) {
  const started = await startProcess(file, env);
  children.push(started.child);
  return started;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const percentile = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))];
const round = (value, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

const headers = { authorization: "Bearer bench-key", "service-workspace": "bench", "content-type": "application/json" };
const chatBody = JSON.stringify({ model: "ask", messages: [{ role: "user", content: "How much annual leave do employees get?" }] });
const streamBody = JSON.stringify({ model: "ask", stream: true, messages: [{ role: "user", content: "How much annual leave do employees get?" }] });
const responseBody = JSON.stringify({ model: "ask", input: "How much annual leave do employees get?" });
const responseStreamBody = JSON.stringify({ model: "ask", stream: true, input: "How much annual leave do employees get?" });
const createBody = JSON.stringify({ content: "How much annual leave do employees get?", mode: "ask" });

/** One autocannon run: throughput and latency. */
async function loadOnce(url, body, connections, seconds = SECONDS) {
  const result = await autocannon({ url, method: "POST", headers, body, connections, duration: seconds });
  if (result.errors || result.non2xx) throw new Error(`${url}: ${result.errors} errors, ${result.non2xx} non-2xx`);
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 };
}

/**
 * Throughput of every target at 50 connections: a short warm-up of each, then REPEATS rounds that
 * take turns (as the one-at-a-time rounds do); medians over rounds, and the adapter's share of the
 * bare proxy's throughput as the median of the per-round ratios.
 */
async function loadRounds(targets) {
  for (const [url, body] of Object.values(targets)) await loadOnce(url, body, 50, 2); // warm-up, discarded
  const rounds = [];
  for (let repeat = 0; repeat < REPEATS; repeat += 1) {
    const figures = {};
    for (const [name, [url, body]] of Object.entries(targets)) figures[name] = await loadOnce(url, body, 50);
    rounds.push(figures);
  }
  const fifty = {};
  for (const name of Object.keys(targets)) {
    fifty[name] = {
      rps: round(median(rounds.map((figures) => figures[name].rps)), 0),
      p50Ms: median(rounds.map((figures) => figures[name].p50)),
      p99Ms: median(rounds.map((figures) => figures[name].p99)),
      runs: rounds.map((figures) => round(figures[name].rps, 0)),
    };
  }
  const shareOf = (name) => round(median(rounds.map((figures) => figures[name].rps / figures.bareProxy.rps)), 3);
  const baseShares = targets.adapterBase ? { baseShare: shareOf("adapterBase"), baseResponsesShare: shareOf("responsesBase") } : {};
  return { fifty, share: shareOf("adapter"), responsesShare: shareOf("responses"), ...baseShares };
}

/** Latency of one request at a time, in microseconds: full response, and time to the first body byte. */
async function sequential(url, body, count) {
  const dispatcher = new Agent({ connections: 1 });
  const total = [];
  const firstByte = [];
  for (let index = 0; index < count + 200; index += 1) {
    const started = process.hrtime.bigint();
    const response = await request(url, { method: "POST", headers, body, dispatcher });
    let first = 0n;
    for await (const _chunk of response.body) if (!first) first = process.hrtime.bigint();
    const ended = process.hrtime.bigint();
    if (index < 200) continue; // warm-up
    total.push(Number(ended - started) / 1000);
    firstByte.push(Number(first - started) / 1000);
  }
  await dispatcher.close();
  return { p50Us: round(percentile(total, 50), 0), p99Us: round(percentile(total, 99), 0), firstByteP50Us: round(percentile(firstByte, 50), 0) };
}

/**
 * One-at-a-time latency of every target, in REPEATS rounds that take turns (upstream, proxy,
 * adapter, ... then again), so that each round's figures share the machine's mood of the moment;
 * the added latencies are per-round differences, and the medians over rounds are reported.
 */
async function sequentialRounds(targets, count) {
  const rounds = [];
  for (let repeat = 0; repeat < REPEATS; repeat += 1) {
    const figures = {};
    for (const [name, [url, body]] of Object.entries(targets)) figures[name] = await sequential(url, body, count);
    rounds.push(figures);
  }
  const medianOf = (pick) => round(median(rounds.map(pick)), 0);
  const single = {};
  for (const name of Object.keys(targets)) {
    single[name] = {
      p50Us: medianOf((figures) => figures[name].p50Us),
      p99Us: medianOf((figures) => figures[name].p99Us),
      firstByteP50Us: medianOf((figures) => figures[name].firstByteP50Us),
    };
  }
  const added = (name) => medianOf((figures) => figures[name].p50Us - figures.upstream.p50Us);
  const adapterNames = ["adapter", "adapterStream", "responses", "responsesStream"];
  const baseNames = targets.adapterBase ? adapterNames.map((name) => `${name}Base`) : [];
  return {
    single,
    addedP50Us: Object.fromEntries(["bareProxy", ...adapterNames, ...baseNames].map((name) => [name, added(name)])),
    firstStreamByteAfterCreateUs: medianOf((figures) => figures.adapterStream.firstByteP50Us - figures.upstream.p50Us),
  };
}

/**
 * The hot routes against the instant upstream: one request at a time, then 50 connections, beside
 * the upstream itself and a bare proxy. BENCH_BASE=<an older built checkout> adds that checkout's
 * adapter (its own dist/) for the same four requests, taking turns with this one's (`…Base`).
 */
async function throughputAndLatency() {
  const upstream = await start("instant-upstream.mjs");
  const proxy = await start("bare-proxy.mjs", { UPSTREAM_PORT: String(upstream.port) });
  const adapter = await start("adapter-process.mjs", adapterEnvironment(upstream.url));
  const base = process.env.BENCH_BASE;
  const before = base ? await start(pathToFileURL(`${base}/bench/adapter-process.mjs`).href, adapterEnvironment(upstream.url)) : undefined;
  const targets = {
    upstream: [`${upstream.url}/queries`, createBody],
    bareProxy: [`${proxy.url}/v1/chat/completions`, chatBody],
    adapter: [`${adapter.url}/v1/chat/completions`, chatBody],
    adapterStream: [`${adapter.url}/v1/chat/completions`, streamBody],
    responses: [`${adapter.url}/v1/responses`, responseBody],
    responsesStream: [`${adapter.url}/v1/responses`, responseStreamBody],
    ...(before
      ? {
          adapterBase: [`${before.url}/v1/chat/completions`, chatBody],
          adapterStreamBase: [`${before.url}/v1/chat/completions`, streamBody],
          responsesBase: [`${before.url}/v1/responses`, responseBody],
          responsesStreamBase: [`${before.url}/v1/responses`, responseStreamBody],
        }
      : {}),
  };
  const { single, addedP50Us, firstStreamByteAfterCreateUs } = await sequentialRounds(targets, 1000);
  const { fifty, share, responsesShare, ...baseShares } = await loadRounds(targets);
  for (const server of [upstream, proxy, adapter, before]) server?.child.kill();
  return {
    ...(base ? { base } : {}),
    oneAtATime: single,
    fiftyConnections: fifty,
    addedP50Us,
    firstStreamByteAfterCreateUs,
    adapterShareOfBareProxy: share,
    responsesShareOfBareProxy: responsesShare,
    ...baseShares,
  };
}

async function waitingQueries() {
  const { workspace, adapter } = await startWorkspaceAndAdapter(start, { POLL_INTERVAL_MIN_MS: "100", POLL_INTERVAL_MAX_MS: "100" });
  const dispatcher = new Agent({ connections: 2000 });
  const results = [];
  const open = [];
  for (const waiting of [10, 100, 1000]) {
    while (open.length < waiting) {
      const controller = new AbortController();
      const done = request(`${adapter.url}/v1/chat/completions`, {
        method: "POST",
        headers,
        body: JSON.stringify({ model: "ask", messages: [{ role: "user", content: `leave ${open.length} [fault:stall]` }] }),
        dispatcher,
        signal: controller.signal,
      }).catch(() => null);
      open.push({ controller, done });
    }
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const before = await statsOf(adapter.child);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const after = await statsOf(adapter.child);
    const polls = 3000 / 100;
    results.push({
      waiting: after.waitingQueries,
      listCallsPerPoll: round((after.listCalls - before.listCalls) / polls, 2),
      pagesNeeded: Math.min(10, Math.ceil(waiting / 100)),
    });
  }
  for (const { controller } of open) controller.abort();
  await dispatcher.close();
  for (const { child } of [workspace, adapter]) child.kill();
  return results;
}

async function idleStreams(count) {
  const { workspace, adapter } = await startWorkspaceAndAdapter(start, {
    SSE_KEEPALIVE_MS: "1000",
    MAX_CONCURRENT_REQUESTS: "100000",
    MAX_CONCURRENT_PER_WORKSPACE: "100000",
  });
  // A finished completion first, so that the baseline has everything a serving adapter has loaded.
  const warm = await request(`${adapter.url}/v1/chat/completions`, {
    method: "POST",
    headers,
    body: JSON.stringify({ model: "ask", messages: [{ role: "user", content: "How much annual leave do employees get?" }] }),
  });
  if (warm.statusCode !== 200) throw new Error(`warm-up request: ${warm.statusCode}`);
  await warm.body.text();
  const baseline = await statsOf(adapter.child);
  let keepAlives = 0;
  const { stats, peakRssBytes } = await holdOpen(
    adapter.child,
    count,
    (index, dispatcher, signal) =>
      request(`${adapter.url}/v1/chat/completions`, {
        method: "POST",
        headers,
        body: JSON.stringify({ model: "ask", stream: true, messages: [{ role: "user", content: `leave ${index} [fault:stall]` }] }),
        dispatcher,
        signal,
      }).then(async (response) => {
        for await (const chunk of response.body) if (String(chunk).includes(": keep-alive")) keepAlives += 1;
      }),
    (stats) => stats.openStreams >= count,
  );
  for (const { child } of [workspace, adapter]) child.kill();
  return {
    streams: stats.openStreams,
    keepAlivesReceived: keepAlives,
    rssMB: round(stats.rssBytes / 2 ** 20, 1),
    peakRssMB: round(peakRssBytes / 2 ** 20, 1),
    heapUsedMB: round(stats.heapUsedBytes / 2 ** 20, 1),
    heapTotalMB: round(stats.heapTotalBytes / 2 ** 20, 1),
    externalMB: round(stats.externalBytes / 2 ** 20, 1),
    baselineRssMB: round(baseline.rssBytes / 2 ** 20, 1),
    eventLoopDelayP99Ms: round(stats.eventLoopDelayP99Ms, 2),
    eventLoopDelayMaxMs: round(stats.eventLoopDelayMaxMs, 2),
  };
}

/** The commit measured (with "+" when the tree has changes), or null outside a git checkout. */
function currentCommit() {
  try {
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "src"], { encoding: "utf8" }).trim() !== "";
    return dirty ? `${commit}+` : commit;
  } catch {
    return null;
  }
}

const results = new URL("results/", here);
const page = new URL("../docs/benchmarks.md", here);
/** This Node's results file: one per major version, so that the page shows each version `engines` allows. */
const ownResults = new URL(`node-${majorOf(process.version)}.json`, results);

if (process.env.BENCH_DOCS_ONLY) {
  writePage(readResults(results), page);
  console.log("wrote docs/benchmarks.md from bench/results/node-*.json");
  process.exit(0);
}

// BENCH_NODES="/path/to/node22 /path/to/node24": the whole run (or BENCH_ONLY's part) under each Node in turn, then the page.
const nodes = (process.env.BENCH_NODES ?? "").split(/[\s,]+/).filter(Boolean);
if (nodes.length > 0) {
  for (const node of nodes) {
    console.log(`--- under ${execFileSync(node, ["--version"], { encoding: "utf8" }).trim()} (${node})`);
    execFileSync(node, [fileURLToPath(import.meta.url)], { stdio: "inherit", env: { ...process.env, BENCH_NODES: "" } });
  }
  process.exit(0);
}

try {
  const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? "unknown", memoryGB: round(totalmem() / 2 ** 30, 1), node: process.version };
  const loadBefore = loadavg()[0];
  console.log(`machine: ${JSON.stringify(machine)}; ${SECONDS} s per run, median of ${REPEATS}`);
  // BENCH_ONLY=latency|cpu|waiting|streams|tokens|realtime|channels|replicas|redis|tracing|limits|governance|ownership|quotas|mcp|chat-ui-tasks|structured|schemas|oauth|background|failover|websocket runs one part (for trying changes; nothing is written unless BENCH_MERGE=1).
  const only = process.env.BENCH_ONLY;
  const measured = {};
  const commit = currentCommit();
  /** When and on which commit each part was measured (a part merged alone later keeps its own). */
  const parts = {};
  const part = async (name, run) => {
    if (only && only !== name) return undefined;
    const result = await run();
    measured[name] = result;
    parts[name] = { date: new Date().toISOString(), commit };
    console.log(name, JSON.stringify(result, null, 2));
    return result;
  };
  const latency = await part("latency", throughputAndLatency);
  const cpu = await part("cpu", () => cpuPerRequest(start, { seconds: SECONDS, rounds: 2 * REPEATS }));
  const waiting = await part("waiting", waitingQueries);
  const streams = await part("streams", () => idleStreams(Number(process.env.BENCH_STREAMS ?? 5000)));
  const tokens = await part("tokens", tokenCounting);
  const realtime = await part("realtime", () => realtimeLatency(start));
  const channels = await part("channels", () => channelStreams(start));
  const replicas = await part("replicas", () => replicaPolling(start));
  const redis = await part("redis", () => slowRedis(start));
  const tracing = await part("tracing", () => tracingCost({ seconds: SECONDS, rounds: 2 * REPEATS }));
  const limits = await part("limits", () => rateLimitCost(start));
  const governance = await part("governance", () => governanceCost(start));
  const ownership = await part("ownership", () => ownershipCost(start));
  const quotas = await part("quotas", () => quotaCost(start));
  const mcp = await part("mcp", async () => ({ cost: await toolCallCost(start, { seconds: SECONDS, repeats: REPEATS }), waiting: await waitingToolCalls(start) }));
  const chatUiTasks = await part("chat-ui-tasks", () => chatUiTaskCost(start));
  const structured = await part("structured", () => structuredCost(start));
  // The schema check's and validation's worst cases, in this process (docs/structured-answers.md#the-schema-is-untrusted).
  const schemas = await part("schemas", () => schemaWorstCases());
  const oauth = await part("oauth", () => oauthCost(start, { seconds: SECONDS, repeats: REPEATS }));
  const background = await part("background", () => backgroundCost(start));
  const failover = await part("failover", () => clusterFailover(start, { repeats: REPEATS }));
  // Responses WebSocket mode: a turn's added latency and CPU against HTTP, and the memory of an idle socket.
  const websocket = await part("websocket", () => webSocketCost({ rounds: REPEATS }));
  const run = { date: new Date().toISOString(), commit, machine, loadAverage: [round(loadBefore, 1), round(loadavg()[0], 1)], seconds: SECONDS, repeats: REPEATS };
  mkdirSync(results, { recursive: true });
  if (only) {
    // BENCH_MERGE=1: the part measured alone replaces its own in this Node's results, and the page is written again.
    if (!process.env.BENCH_MERGE || measured[only] === undefined) process.exit(0);
    let kept = {};
    try {
      kept = JSON.parse(readFileSync(ownResults, "utf8"));
    } catch {
      // the first part measured under this Node
    }
    const merged = { ...kept, ...run, parts: { ...kept.parts, ...parts }, [{ "chat-ui-tasks": "chatUiTasks" }[only] ?? only]: measured[only] };
    writeFileSync(ownResults, `${JSON.stringify(merged, null, 2)}\n`);
  } else {
    const all = { ...run, parts, latency, cpu, waiting, streams, tokens, realtime, channels, replicas, redis, tracing, limits, governance, ownership, quotas, mcp, chatUiTasks, structured, schemas, oauth, background, failover, websocket };
    writeFileSync(ownResults, `${JSON.stringify(all, null, 2)}\n`);
  }
  writePage(readResults(results), page);
  console.log(`wrote bench/results/node-${majorOf(process.version)}.json and docs/benchmarks.md`);
} finally {
  for (const child of children) child.kill();
}
