// `npm run bench`: how much the adapter adds between a client and the workspace, measured side by
// side with the upstream called directly and a bare node:http pass-through proxy, on loopback only.
// Writes bench/results/latest.json and docs/benchmarks.md. Knobs: BENCH_SECONDS (per run, default 5),
// BENCH_REPEATS (default 3; medians are reported), BENCH_ONLY (one part, nothing written unless
// BENCH_MERGE=1 merges it into latest.json).
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import autocannon from "autocannon";
import { Agent, request } from "undici";
import { O200kTokenCounter, WorkerTokenCounter } from "../dist/src/tokens/token-counter.js";
import { countUsage } from "../dist/src/answer/count-usage.js";
import { adapterEnvironment, holdOpen, startProcess, startWorkspaceAndAdapter, statsOf } from "./processes.mjs";
import { channelStreams, realtimeLatency } from "./realtime.mjs";
import { slowRedis } from "./redis-latency.mjs";
import { rateLimitCost } from "./rate-limits.mjs";
import { governanceCost } from "./governance.mjs";
import { replicaPolling } from "./replicas.mjs";
import { tracingCost } from "./tracing.mjs";
import { toolCallCost, waitingToolCalls } from "./mcp.mjs";
import { cpuPerRequest, cpuSection } from "./cpu.mjs";
import { oauthCost } from "./oauth.mjs";
import { chatUiTaskCost } from "./chat-ui-tasks.mjs";
import { structuredCost, structuredSection } from "./structured.mjs";
import { backgroundCost } from "./background.mjs";
import { clusterFailover } from "./cluster-failover.mjs";

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
  return { fifty, share: shareOf("adapter"), responsesShare: shareOf("responses") };
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
  return {
    single,
    addedP50Us: {
      bareProxy: added("bareProxy"),
      adapter: added("adapter"),
      adapterStream: added("adapterStream"),
      responses: added("responses"),
      responsesStream: added("responsesStream"),
    },
    firstStreamByteAfterCreateUs: medianOf((figures) => figures.adapterStream.firstByteP50Us - figures.upstream.p50Us),
  };
}

async function throughputAndLatency() {
  const upstream = await start("instant-upstream.mjs");
  const proxy = await start("bare-proxy.mjs", { UPSTREAM_PORT: String(upstream.port) });
  const adapter = await start("adapter-process.mjs", adapterEnvironment(upstream.url));
  const targets = {
    upstream: [`${upstream.url}/queries`, createBody],
    bareProxy: [`${proxy.url}/v1/chat/completions`, chatBody],
    adapter: [`${adapter.url}/v1/chat/completions`, chatBody],
    adapterStream: [`${adapter.url}/v1/chat/completions`, streamBody],
    responses: [`${adapter.url}/v1/responses`, responseBody],
    responsesStream: [`${adapter.url}/v1/responses`, responseStreamBody],
  };
  const { single, addedP50Us, firstStreamByteAfterCreateUs } = await sequentialRounds(targets, 1000);
  const { fifty, share, responsesShare } = await loadRounds(targets);
  for (const { child } of [upstream, proxy, adapter]) child.kill();
  return {
    oneAtATime: single,
    fiftyConnections: fifty,
    addedP50Us,
    firstStreamByteAfterCreateUs,
    adapterShareOfBareProxy: share,
    responsesShareOfBareProxy: responsesShare,
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

/** How long counting a 200 KB answer takes, and the longest the event loop is blocked meanwhile. */
async function countingBlock(counter, text) {
  // Warm: a serving adapter's counter is compiled and hot; a first, unoptimized run is not the case measured.
  for (let warm = 0; warm < 3; warm += 1) await countUsage([{ prompt: "warm up", content: text, reasoning: "" }], counter);
  // The longest gap between ticks of a 1 ms timer while the count runs: how long the loop was blocked.
  let longest = 0;
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  await new Promise((resolve) => setTimeout(resolve, 20));
  last = performance.now();
  const started = performance.now();
  const usage = await countUsage([{ prompt: "How much leave?", content: text, reasoning: "" }], counter);
  const elapsed = performance.now() - started;
  clearInterval(ticker);
  await counter.close();
  return { completionTokens: usage.completionTokens, totalMs: round(elapsed), longestBlockMs: round(longest) };
}

/** The adapter's counter (a long text goes to the worker) and its fallback (slices on the event loop). */
async function tokenCounting() {
  // About 200 KB of real prose and code: the project's README and docs/ pages (what the README held
  // before it became a short entry), repeated.
  const docs = new URL("../docs/", here);
  const pages = ["../README.md", ...readdirSync(docs).filter((name) => name.endsWith(".md")).sort().map((name) => `../docs/${name}`)];
  const prose = pages.map((page) => readFileSync(new URL(page, here), "utf8")).join("\n");
  const text = prose.repeat(Math.ceil(200_000 / prose.length)).slice(0, 200_000);
  const worker = await countingBlock(new WorkerTokenCounter(), text);
  const inline = await countingBlock(new O200kTokenCounter(), text);
  // One word of 16,000 letters: a single piece, where a plain byte-pair merge is quadratic.
  const word = new O200kTokenCounter();
  await word.count(["a".repeat(16_000)]);
  const started = performance.now();
  await word.count(["b".repeat(16_000)]);
  const longWordMs = round(performance.now() - started);
  return { bytes: text.length, ...worker, inlineTotalMs: inline.totalMs, inlineLongestBlockMs: inline.longestBlockMs, longWordMs };
}

/** docs/benchmarks.md from a result set, written unless `write` is false (\`BENCH_DOCS_ONLY=1\` rewrites it from results/latest.json). */
function writeDocs(results, { write = true } = {}) {
  const { machine, latency, waiting, streams, tokens, realtime, channels, replicas, redis, limits, mcp } = results;
  const SECONDS = results.seconds;
  const REPEATS = results.repeats;
  const one = latency.oneAtATime;
  const fifty = latency.fiftyConnections;
  const verdict = (ok) => (ok ? "met" : "**missed**");
  const targets = [
    ["added p50 latency, one request at a time", "≤ 500 µs", `${latency.addedP50Us.adapter} µs`, latency.addedP50Us.adapter <= 500],
    ["non-streaming completions at 50 connections", "≥ 5,000/s", `${fifty.adapter.rps}/s`, fifty.adapter.rps >= 5000],
    ["share of the bare proxy's throughput", "≥ 35%", `${Math.round(latency.adapterShareOfBareProxy * 100)}%`, latency.adapterShareOfBareProxy >= 0.35],
    ...(latency.addedP50Us.responses === undefined
      ? []
      : [
          ["Responses API: added p50 latency, one request at a time", "≤ 500 µs", `${latency.addedP50Us.responses} µs`, latency.addedP50Us.responses <= 500],
          [
            "Responses API: share of the bare proxy's throughput",
            "≥ 35%",
            `${Math.round(latency.responsesShareOfBareProxy * 100)}%`,
            latency.responsesShareOfBareProxy >= 0.35,
          ],
        ]),
    ["first stream byte after the upstream's create answer", "≤ 1 ms", `${latency.firstStreamByteAfterCreateUs} µs`, latency.firstStreamByteAfterCreateUs <= 1000],
    [
      "list calls per poll with 1,000 waiting requests",
      "one per poll, plus pages",
      `${waiting.at(-1).listCallsPerPoll} (pages: ${waiting.at(-1).pagesNeeded})`,
      waiting.every((row) => row.listCallsPerPoll <= row.pagesNeeded + 0.05),
    ],
    [`RSS with ${streams.streams} idle streams (highest sample, opening them and 10 s open)`, "< 300 MB", `${streams.peakRssMB} MB`, streams.peakRssMB < 300],
    ["event-loop delay p99 with them open", "< 20 ms", `${streams.eventLoopDelayP99Ms} ms`, streams.eventLoopDelayP99Ms < 20],
    [
      "longest event-loop block counting a 200 KB answer",
      "a few ms",
      `${tokens.longestBlockMs} ms (${tokens.inlineLongestBlockMs} ms without the worker)`,
      Math.max(tokens.longestBlockMs, tokens.inlineLongestBlockMs) <= 5,
    ],
    ...(realtime
      ? [
          [
            "first content after the first publication, with the channel (p99)",
            "≤ 20 ms",
            `${realtime.channel.firstContentAfterFirstPublication.p99Ms} ms`,
            realtime.channel.firstContentAfterFirstPublication.p99Ms <= 20,
          ],
          [
            "answer ended after the query ended, with the channel (p99, streamed and plain)",
            "≤ 50 ms",
            `${realtime.channel.streamEndAfterQueryEnded.p99Ms} ms, ${realtime.channel.plainAnswerAfterQueryEnded.p99Ms} ms`,
            Math.max(realtime.channel.streamEndAfterQueryEnded.p99Ms, realtime.channel.plainAnswerAfterQueryEnded.p99Ms) <= 50,
          ],
        ]
      : []),
    ...(channels
      ? [[`event-loop delay p99 with ${channels.streams} streams with channels open`, "≤ 20 ms", `${channels.eventLoopDelayP99Ms} ms`, channels.eventLoopDelayP99Ms <= 20]]
      : []),
  ];
  const doc = `# Benchmarks

The latest numbers of \`npm run bench\` (${results.date.slice(0, 10)}), on ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGB} GB, Node ${machine.node}.
Everything runs on loopback, each server in its own process: an upstream that answers at once (a
minimal interface-conformant server returning a finished, cited 1 KB answer), a bare \`node:http\`
pass-through proxy (the yardstick: the same two HTTP hops, nothing else), and this adapter as \`npm start\` runs it
(logging on, metrics on). Each load run lasts ${SECONDS} s; the figures are medians of ${REPEATS} runs.
Reproduce with \`npm run bench\` (\`BENCH_SECONDS\`, \`BENCH_REPEATS\`, \`BENCH_STREAMS\` adjust it); the raw
numbers are in \`bench/results/latest.json\`.

## Against the targets

${table([["", "target", "measured", ""], ["---", "---", "---", "---"], ...targets.map(([what, target, measured, ok]) => [what, target, measured, verdict(ok)])])}

## One request at a time (${REPEATS} rounds of 1,000 sequential requests per target, taking turns)

${table([
  ["", "p50", "p99", "added p50 over the upstream"],
  ["---", "---", "---", "---"],
  ["upstream directly", `${one.upstream.p50Us} µs`, `${one.upstream.p99Us} µs`, "—"],
  ["bare proxy", `${one.bareProxy.p50Us} µs`, `${one.bareProxy.p99Us} µs`, `${latency.addedP50Us.bareProxy} µs`],
  ["adapter", `${one.adapter.p50Us} µs`, `${one.adapter.p99Us} µs`, `${latency.addedP50Us.adapter} µs`],
  ["adapter, streamed", `${one.adapterStream.p50Us} µs`, `${one.adapterStream.p99Us} µs`, `${latency.addedP50Us.adapterStream} µs`],
  ...(one.responses
    ? [
        ["adapter, Responses API", `${one.responses.p50Us} µs`, `${one.responses.p99Us} µs`, `${latency.addedP50Us.responses} µs`],
        ["adapter, Responses API streamed", `${one.responsesStream.p50Us} µs`, `${one.responsesStream.p99Us} µs`, `${latency.addedP50Us.responsesStream} µs`],
      ]
    : []),
])}

Over the bare proxy (the yardstick: the same two HTTP hops, nothing else), the adapter adds
${latency.addedP50Us.adapter - latency.addedP50Us.bareProxy} µs: reading and validating the request, planning, parsing and checking the upstream's answer,
citations, token counting and the completion's JSON. First streamed byte after the upstream's create
answer (p50): ${latency.firstStreamByteAfterCreateUs} µs.

## 50 connections (autocannon; ${REPEATS} rounds of ${SECONDS} s per target, taking turns)

${table([
  ["", "requests/s (median)", "each round", "p50", "p99"],
  ["---", "---", "---", "---", "---"],
  ...[
    ["upstream directly", fifty.upstream],
    ["bare proxy", fifty.bareProxy],
    ["adapter", fifty.adapter],
    ["adapter, streamed", fifty.adapterStream],
    ...(fifty.responses ? [["adapter, Responses API", fifty.responses], ["adapter, Responses API streamed", fifty.responsesStream]] : []),
  ].map(([name, row]) => [name, row.rps, (row.runs ?? []).join(", "), `${row.p50Ms} ms`, `${row.p99Ms} ms`]),
])}

The adapter serves ${Math.round(latency.adapterShareOfBareProxy * 100)}% of the bare proxy's throughput (the median of the per-round ratios);
the three processes share the machine's ${machine.cpus} cores with autocannon.

${cpuSection(results.cpu, table)}${
  replicas
    ? `## Replicas: list calls the workspace service sees

${replicas.waiting} requests waiting in one workspace (${Math.ceil(replicas.waiting / 100)} pages per poll), spread over the replicas; list calls per
${replicas.intervalMs} ms poll interval, all replicas together.${replicas.redis ? "" : " (No redis-server on this machine: only the replicas polling alone were measured.)"}

${table([
  ["replicas", "each polling alone", "sharing through Redis"],
  ["---", "---", "---"],
  ...[1, 2, 4].map((count) => [
    String(count),
    String(replicas.rows.find((row) => row.replicas === count && !row.sharing)?.listCallsPerInterval ?? "—"),
    String(replicas.rows.find((row) => row.replicas === count && row.sharing)?.listCallsPerInterval ?? "—"),
  ]),
])}

`
    : ""
}${redis && !redis.skipped ? slowRedisSection(redis, machine) : ""}${limitsSection(limits)}${governanceSection(results.governance)}## Recent runs

Each run of \`npm run bench\` is kept in \`bench/results/runs/\`; the last ${Math.min(5, recentRuns().length)}, with the bare proxy beside
the adapter, show how much of the spread is the machine's:

${table([
  ["run (commit)", "added p50", "completions/s at 50 connections", "share of the bare proxy", "peak RSS, 5,000 streams", "bare proxy: added p50, requests/s"],
  ["---", "---", "---", "---", "---", "---"],
  ...recentRuns().map((run) => [
    `${run.date.slice(0, 16).replace("T", " ")} (${run.commit ?? "?"})`,
    `${run.latency.addedP50Us.adapter} µs`,
    run.latency.fiftyConnections.adapter.rps,
    `${Math.round(run.latency.adapterShareOfBareProxy * 100)}%`,
    `${run.streams.peakRssMB ?? run.streams.rssMB} MB`,
    `${run.latency.addedP50Us.bareProxy} µs, ${run.latency.fiftyConnections.bareProxy.rps}`,
  ]),
])}

## Waiting queries cost polls, not requests

Requests waiting on queries that never finish, in one workspace, polled every 100 ms:

${table([
  ["waiting requests", "list calls per poll", "pages needed (100 per page, at most MAX_LIST_PAGES = 10)"],
  ["---", "---", "---"],
  ...waiting.map((row) => [row.waiting, row.listCallsPerPoll, row.pagesNeeded]),
])}

## Many open streams

${streams.streams} concurrent idle streams (queries that never finish, a keep-alive every second,
${streams.keepAlivesReceived} keep-alives received in all), sampled while they opened and every half second for 10 s after: the
adapter's RSS was at most ${streams.peakRssMB} MB and ${streams.rssMB} MB at the end (${streams.baselineRssMB} MB before, after one finished completion),
and its event-loop delay p99 ${streams.eventLoopDelayP99Ms} ms (max ${streams.eventLoopDelayMaxMs} ms) while they were open.

${realtimeSection(realtime, channels)}${tracingSection(results.tracing, readTracingRun())}${mcpSection(mcp)}${oauthSection(results.oauth)}${chatUiTasksSection(results.chatUiTasks)}${structuredSection(results.structured, table)}${backgroundSection(results.background)}${failoverSection(results.failover)}## What shaped these numbers

- The profile (\`npm run bench:profile\`) showed Express's router and request decoration costing more
  than half of the chat route's throughput (an isolated test: 3.2k vs 7.5k requests/s), so
  \`POST /v1/chat/completions\` runs on plain \`node:http\`; Express serves the other routes.
- Upstream calls use undici's low-level \`dispatch\` (about 25% cheaper per call than \`request()\`).
- Tracing is OpenTelemetry's SDK since 2026-11-28 (issue 58): the adapter's own span, protobuf encoder,
  shared-memory ring and export worker went, and with them two V8 workarounds, \`String.prototype\` made fast
  again after ioredis subclassed \`String\`, and one \`process.nextTick\` tick object held for the adapter's life
  (their measurements are in git history). What the first one bought is measured again in [Tracing](#tracing):
  with ioredis loaded, the SDK's serializer costs about three times what it costs with the prototype fast.
- Token counting has its own o200k counter (\`src/tokens\`): the 200,000 ranks live in one
  hash table of typed arrays (about 11 MB outside the JavaScript heap, where gpt-tokenizer's Map of
  strings took about 55 MB of RSS and slowed every full GC), and an ASCII-first pre-tokenizer
  replaces the Unicode regular expression where it can (a 1 KB answer: 10 µs warm, 25 µs cold,
  against 30 and 65 µs). Its counts equal tiktoken's (OpenAI's own tokenizer) on the project's documents and on
  fast-check text. While requests overlap, counting runs on a worker thread that shares the table
  (jobs of one event-loop turn travel in one message, and a completion sends one job: a prompt
  is counted apart, while the upstream answers, only when it is longer than 2,048 characters):
  at 50 connections that is 200 µs of event-loop time per completion against 320 µs counting inline. With one request in flight it
  counts inline, since waking the worker costs about 0.2 ms of latency.
- Idle streams: a poll that finds a waiting query unchanged no longer wakes its stream, the
  stream's mailbox is the poller's waiter and its abort listener, a request has one
  AbortController, and one choice needs no merging generator. That took 5,000 idle streams from
  about 320 MB of RSS that kept growing while they were open to ${streams.peakRssMB} MB at most in this run
  (235-270 MB over the runs of 2026-11-21), which no longer grows while they stay open. Since then
  each idle stream also holds its realtime channel subscription when the workspace offers one (the
  embedded workspace does): after a forced GC, 2,000 idle streams retained 17.4 KB of heap each
  before the realtime channel and the answer core (7a8ef67), and 23.1 KB each on 2026-11-22, of
  which 3.7 KB is the centrifuge subscription (19.4 KB with \`REALTIME=off\`).
- The machine is small and shared: autocannon, the upstream, the proxy and the adapter run on the
  same ${machine.cpus} cores of a virtual machine whose CPU time varies (on 2026-11-21, successive 4-second
  runs of one build at 50 connections ranged from 3,000 to 5,300 requests/s, and the same build's
  event-loop time per request from 200 to 310 µs within the hour; the first full run of the day
  measured the bare proxy at 191 µs added and 11,985 requests/s, against ${latency.addedP50Us.bareProxy} µs and ${fifty.bareProxy.rps} here).
  Rounds take turns so that each comparison uses figures taken minutes apart at most; the
  adapter's share of the bare proxy is the steadier figure. On 2026-11-22 the whole VM ran about
  three times slower than the day before (the upstream alone: 10,600 against 33,000 requests/s),
  so the absolute targets read as missed while the share held at 43-44%. Comparing builds on one
  machine, \`node bench/quick.mjs\` in alternating pairs (event-loop time per request) is the
  fairer test: before the answer core (7a8ef67) against 2026-11-22's build, 606/515/440 µs
  against 557/515/540 µs.

## Token counting

Counting speed (2026-11-27, Node 24, best of 15 runs, CPU time of one thread, warm): the
benchmark's answer (568 characters, 127 tokens) 12.5 µs, 99 ns a token; \`docs/*.md\` in chunks of
about 600 characters (308 texts, 82,366 tokens) 50.4 µs a chunk, 188 ns a token; the strings of
the test fixtures (1,593 texts) 3.4 µs a text, 143 ns a token. Before that day's changes: 16.9 µs,
64.7 µs and 4.6 µs. Varied text costs more a token than the benchmark's answer, repeated in a
loop, suggests: more pieces are merged (a merge was 40% of the time on the docs), and a loop over
one text is one the branch predictor can probably learn. What changed: ASCII pieces are hashed and compared straight
from the string; punctuation and symbols beyond ASCII (dashes, curly quotes, arrows) are scanned
like ASCII punctuation instead of going through the regular expression; a merge looks two-byte
pairs up in a 256 KB direct table. On the chat completion (ab.mjs, per-thread CPU from /proc)
the token worker went from 30.9 to 23.8 µs a request with one job per completion.

Counting the usage of a ${Math.round(tokens.bytes / 1000)} KB answer (${tokens.completionTokens} tokens) took ${tokens.totalMs} ms in all on the worker
thread; the longest time the event loop was blocked meanwhile was ${tokens.longestBlockMs} ms. Without the worker
(it failed, or is not built), the event loop counts it in 16 KB slices with a turn between them:
${tokens.inlineTotalMs} ms in all, blocking it for ${tokens.inlineLongestBlockMs} ms at most. A single 16,000-letter word (one piece, where a
plain byte-pair merge is quadratic: about 250 ms) takes ${tokens.longWordMs} ms with the heap merge.
`;
  if (write) writeFileSync(new URL("../docs/benchmarks.md", here), doc);
  return doc;
}

/** The last run of bench/tracing.mjs alone (with the comparison against the code before tracing), if any. */
function readTracingRun() {
  try {
    return JSON.parse(readFileSync(new URL("results/tracing.json", here), "utf8"));
  } catch {
    return null;
  }
}

/**
 * Where tracing's cost goes: measured with variants of bench/tracing.mjs and a loop of one
 * request's tracing calls (written by hand: these are experiments, not parts of the run).
 */
const TRACING_NOTES = [
  "Where tracing's cost goes (measured on 2026-11-28 with `TRACED=1 npm run bench:profile` and a loop of one",
  "request's tracing calls on the SDK, `process.cpuUsage()`): recording a request's three spans (the SDK's spans,",
  "their facts written as they end, the context that makes each active while its work runs) takes about 16 µs;",
  "the SDK's OTLP protobuf serializer about 4 µs a span; its batch processor and the export's HTTP under 2 µs a",
  "request. In a process that has loaded ioredis the serializer takes 13 µs a span: ioredis declares",
  "`class VerbatimString extends String` as it loads, which leaves V8's `String.prototype` a dictionary, and the",
  "serializer copies strings a `charCodeAt` at a time, each call then a generic look-up (the loop: 70 µs a request",
  "against 41 µs with the prototype fast again). The adapter loads ioredis whatever its backend, so the table",
  "above measures that. Side by side on a quiet machine (2026-11-28, 5 rounds of 4 s, `process.cpuUsage()` and",
  "/proc per thread), a traced adapter whose prototype was made fast again by hand cost 1.42× an untraced one",
  "(126 against 90 µs a request), and 1.12× with every span dropped by the sampler (`always_off`: the context,",
  "the propagation headers, the spans that record nothing); the untraced adapter cost the same either way",
  "(0.97×). With `OTEL_EXPORTER_OTLP_PROTOCOL=http/json` the SDK's JSON serializer, which leaves the strings",
  "to `JSON.stringify`, takes 4.6 µs a span with ioredis loaded (3.7 µs without). Until 2026-11-28 the adapter made the prototype fast again at start-up and traced with a",
  "span, encoders and export worker of its own (11 µs a request in the same loop); issue 58 put tracing back on",
  "the SDK, which a platform's instrumentation can join, and removed the code that leaned on V8's internals",
  "(the history of those measurements is in git). Handing spans to another thread instead of serializing them",
  "would cost about the same on the event loop (4 µs a span to copy one) and more in all. At sampling 0.1, an",
  "unsampled request's tracing costs about 6 µs (its context, the propagation headers). A streamed answer whose",
  "client did not ask for usage is counted for its span after the last frame, in the token worker, only for",
  "sampled requests. The usual answer is seconds long, so this is CPU, not latency: at 50 answers a second a",
  "replica spends under 0.5% of a core on tracing at full sampling; at high request rates, sample",
  "(`OTEL_TRACES_SAMPLER=parentbased_traceidratio`, `OTEL_TRACES_SAMPLER_ARG=0.1`).",
].join("\n");

/**
 * The tracing section of docs/benchmarks.md: this run's tracing off against on (when it measured
 * them), and the last run of bench/tracing.mjs alone, which also measures an older checkout (the
 * code before a change), untraced and traced, taking turns with this one.
 */
function tracingSection(tracing, alone) {
  if (!tracing && !alone) return "";
  const row = (name, figures) => [name, `${figures.rps}/s`, `${figures.cpuUsPerRequest} µs`, `${figures.loopUsPerRequest} µs`];
  const rows = (measured, base) => {
    const here = (label) => (measured.targets.before ? `this code: ${label}` : label);
    return [
      ...(measured.targets.before ? [row(`${base}: tracing off`, measured.targets.before)] : []),
      ...(measured.targets.beforeOn ? [row(`${base}: tracing on, sampling 1.0`, measured.targets.beforeOn)] : []),
      ...(measured.targets.beforeOn10 ? [row(`${base}: tracing on, sampling 0.1`, measured.targets.beforeOn10)] : []),
      row(here("tracing off"), measured.targets.off),
      row(here("tracing on, sampling 1.0"), measured.targets.on),
      ...(measured.targets.on10 ? [row(here("tracing on, sampling 0.1"), measured.targets.on10)] : []),
    ];
  };
  const range = (ratio) => `${ratio.median}× (from ${ratio.min} to ${ratio.max})`;
  const ratios = (measured, base) =>
    [
      `tracing on used ${range(measured.onOverOff)} the CPU per request of tracing off (median of the ${measured.rounds} rounds' ratios): ${measured.addedCpuUsPerRequest} µs more per request`,
      ...(measured.on10OverOff ? [`sampling 0.1, ${range(measured.on10OverOff)}`] : []),
      ...(measured.beforeOnOverBefore ? [`${base} traced used ${range(measured.beforeOnOverBefore)} its untraced CPU per request`] : []),
      ...(measured.beforeOn10OverBefore ? [`${base} sampling 0.1, ${range(measured.beforeOn10OverBefore)}`] : []),
      ...(measured.offOverBefore ? [`tracing off here used ${range(measured.offOverBefore)} the CPU per request of ${base} untraced`] : []),
      ...(measured.onOverBeforeOn ? [`tracing on here used ${range(measured.onOverBeforeOn)} the CPU per request of ${base} traced`] : []),
    ].join("; ");
  const header = ["| adapter | requests/s | process CPU per request | event loop per request |", "|---|---|---|---|"].join("\n");
  const part = (title, measured, base = "before") => `${title}

${header}
${table(rows(measured, base))}

${ratios(measured, base)}.
`;
  const intro = [
    "## Tracing",
    "",
    "`bench/tracing.mjs`: the chat route against the instant upstream at 50 connections, with tracing off, with",
    "tracing on at sampling 1.0 (every request traced: server, answer and create spans, exported by the SDK's",
    "batch processor as OTLP/HTTP protobuf to a sink in another process) and at sampling 0.1",
    "(`parentbased_traceidratio`), taking turns in alternating order round after round; what is compared is each",
    "round's pair, process CPU time per request (all threads; steadier than requests/s on a shared machine),",
    "counted within a window of steady load (as [CPU per request](#cpu-per-request-side-by-side) measures).",
    "Tracing off loads nothing of OpenTelemetry's SDK and costs a check per traced point.",
    "",
  ];
  const sections = [...intro];
  if (tracing) sections.push(part(`This run (${tracing.rounds} rounds of ${tracing.seconds} s):`, tracing));
  if (alone) {
    const base = alone.base ?? "before";
    const against = alone.base ? `Against ${alone.base}, taking turns with it, measured` : "Measured";
    const load = alone.machine.loadAverage.join(" → ");
    sections.push(`${against} alone on ${alone.date.slice(0, 10)} (commit ${alone.commit}, load average ${load} on ${alone.machine.cpus} cores):`, "");
    sections.push(part(`Plain answers (${alone.plain.rounds} rounds of ${alone.plain.seconds} s):`, alone.plain, base));
    if (alone.streamed) sections.push(part(`Streamed answers (${alone.streamed.rounds} rounds of ${alone.streamed.seconds} s):`, alone.streamed, base));
  }
  sections.push(TRACING_NOTES, "");
  return `${sections.join("\n")}\n`;
}

/** One row of a setting's cost (config-cost.mjs): its p50 and what it adds, its throughput and share, its CPU and what it adds. */
const costRow = (name, figures) =>
  figures
    ? [name, `${figures.p50Us} µs`, `${figures.addedP50Us} µs`, figures.rps, `${Math.round(figures.rpsShareOfUnset * 100)}%`, `${figures.cpuUs} µs`, `${figures.addedCpuUs} µs`]
    : [name, "—", "—", "—", "—", "—", "—"];

/** The rate limits' section of docs/benchmarks.md (empty for runs from before they were measured). */
function limitsSection(limits) {
  if (!limits) return "";
  return `## Rate limits: what they cost

The chat path against the instant upstream with \`RATE_LIMIT_RPM\` alone, and with \`RATE_LIMIT_RPM\`, \`RATE_LIMIT_TPM\`
and \`RATE_LIMIT_CONCURRENT\` all set (the most the limits cost per request), never refusing, against unset; one
client key; ${limits.rounds} rounds in which the adapters take turns, medians of the per-round differences from the
unset adapter (\`bench/rate-limits.mjs\`).

${table([
  ["", "p50, one at a time", "added", "requests/s at 50 connections", "of unset", "adapter CPU per request", "added"],
  ["---", "---", "---", "---", "---", "---", "---"],
  costRow("limits unset", limits.unset),
  costRow("all three in process", limits.inProcess),
  costRow("requests per minute only, in Redis", limits.redisRpm),
  costRow("all three in Redis", limits.redis),
])}
${limits.redis ? `\nRedis itself spent ${limits.redisRpm.redisCpuUs} µs (requests per minute only) and ${limits.redis.redisCpuUs} µs (all three) of CPU per request: all three\ncost three scripts at admission, in one round trip, then the slot's release and the tokens' charge.\n` : "\n(No redis-server on this machine: the Redis rows were not measured.)\n"}
`;
}

/** Governance's section of docs/benchmarks.md: usage counting and the audit trail (empty for runs from before they were measured). */
function governanceSection(governance) {
  if (!governance) return "";
  const reference = governance.baseline ? "the build before governance" : "governance off";
  return `## Usage counting and the audit trail: what they cost

The chat path against the instant upstream with usage counting (\`USAGE_COUNTING=on\`), with usage counting and an
audit record of every answer to a file (\`AUDIT_LOG\`), and both with usage in Redis, against ${reference}; one client
key; ${governance.rounds} rounds in which the adapters take turns, medians of the per-round differences from ${reference}
(\`bench/governance.mjs\`${governance.baseline ? "; the reference is the commit before governance, built apart and named by `BENCH_BASELINE`" : ""}).

${table([
  ["", "p50, one at a time", "added", "requests/s at 50 connections", "of the reference", "adapter CPU per request", "added"],
  ["---", "---", "---", "---", "---", "---", "---"],
  ...(governance.baseline ? [costRow("before governance", governance.baseline)] : []),
  costRow("governance off", governance.off),
  costRow("usage counted, in process", governance.usage),
  costRow("usage counted and every answer audited", governance.usageAndAudit),
  costRow("both, usage in Redis", governance.redisUsageAndAudit),
])}
${governance.redisUsageAndAudit ? `\nRedis itself spent ${governance.redisUsageAndAudit.redisCpuUs} µs of CPU per request (one script per answer).\n` : "\n(No redis-server on this machine: the Redis row was not measured.)\n"}
`;
}

/** The realtime channel's section of docs/benchmarks.md (empty for runs from before it was measured). */
function realtimeSection(realtime, channels) {
  if (!realtime || !channels) return "";
  const row = (name, figures) => [name, `${figures.p50Ms} ms`, `${figures.p99Ms} ms`, `${figures.maxMs} ms`];
  return `## The realtime channel

Against an upstream whose list shows no partial output (\`bench/channel-upstream.mjs\`: a query's first
word is published 150 ms after its create, a word every 5 ms after that, and it ends at 300 ms;
requests start every 50 ms and overlap), ${realtime.channel.firstContentAfterFirstPublication.samples} streamed and as many plain requests per setting:

${table([
  ["", "p50", "p99", "max"],
  ["---", "---", "---", "---"],
  row("first content after the first publication, with the channel", realtime.channel.firstContentAfterFirstPublication),
  row("the same, polling alone", realtime.polling.firstContentAfterFirstPublication),
  row("stream ended after the query ended, with the channel", realtime.channel.streamEndAfterQueryEnded),
  row("the same, polling alone", realtime.polling.streamEndAfterQueryEnded),
  row("plain answer after the query ended, with the channel", realtime.channel.plainAnswerAfterQueryEnded),
  row("the same, polling alone", realtime.polling.plainAnswerAfterQueryEnded),
])}

Polling alone, the text arrives only when the list shows it (here: at the end, all at once). With the
channel the adapter made ${realtime.channel.listCalls} list calls against ${realtime.polling.listCalls} polling alone: each ending query's
terminal status is confirmed by a list call at once (calls that overlap are shared).

${channels.streams} concurrent streams with their channels open (queries that never finish; the embedded workspace
publishes their steps, then nothing) share ${channels.connections} connection with ${channels.subscriptions} subscriptions: the adapter's RSS was at most
${channels.peakRssMB} MB (${channels.baselineRssMB} MB before) and its event-loop delay p99 ${channels.eventLoopDelayP99Ms} ms (max ${channels.eventLoopDelayMaxMs} ms). Once they were
closed, ${channels.afterClose.connections} connections and ${channels.afterClose.subscriptions} subscriptions were left.

`;
}

/** The "Slow Redis" section: conversations across two replicas on a busy machine, per command bound. */
function slowRedisSection(redis, machine) {
  const bounds = ["10ms", "25ms", "50ms", "100ms", "250ms", "500ms", "1000ms"];
  return `## Slow Redis: the command bound and conversations

${redis.conversations} conversations of ${redis.turnsEach} turns each, every turn sent to the other of two replicas sharing one Redis, while
${redis.busyProcesses} CPU-bound processes keep the machine's ${machine.cpus} cores busy; a refused turn (503) is sent again. A fork is a follow-up
answered as a new query; a refusal, a lookup that outlived \`REDIS_COMMAND_TIMEOUT_MS\`.

${table([
  ["command bound", "follow-ups continued", "forked", "refused (sent again)", "commands failed", ...bounds.map((bound) => `answered after > ${bound}`)],
  ["---", "---", "---", "---", "---", ...bounds.map(() => "---")],
  ...redis.rows.map((row) => [
    `${row.boundMs} ms`,
    String(row.continued),
    String(row.forked),
    String(row.refused),
    String(row.commandsFailed),
    ...bounds.map((bound) => String(row.answeredSlowerThan[bound])),
  ]),
])}

`;
}

/** The MCP endpoint's section of docs/benchmarks.md (empty for runs from before it existed). */
function mcpSection(mcp) {
  if (!mcp) return "";
  const { cost, waiting } = mcp;
  const row = (name, figures, added) => [name, figures.rps, `${figures.cpuUsPerCall} µs (${figures.cpuRuns.join(", ")})`, `${figures.eventLoopUsPerCall} µs`, added];
  return `## MCP tool calls

One \`ask\` tool call against one chat completion of the same answer (the instant upstream), at 50
connections, ${cost.chat.cpuRuns.length} rounds taking turns: the adapter process's CPU time (user and system, its token worker
included) per request, the median of the rounds (each round in brackets).

${table([
  ["", "requests/s", "CPU per request", "event loop per request", "added CPU over the completion"],
  ["---", "---", "---", "---", "---"],
  row("chat completion", cost.chat, "—"),
  row("`ask` tool call, 2025-11-25 (JSON)", cost.mcp20251125, `${cost.addedCpuUsOverChat.mcp20251125} µs`),
  row("`ask` tool call, 2026-07-28 (JSON)", cost.mcp20260728, `${cost.addedCpuUsOverChat.mcp20260728} µs`),
])}

${waiting.calls} \`ask\` tool calls waiting at once (queries that never finish), each with a progress token, so each is an
SSE stream that gets a progress notification every second of silence (${waiting.progressNotificationsReceived} received in all): the adapter's
RSS was at most ${waiting.peakRssMB} MB (${waiting.baselineRssMB} MB before, after one finished call) and its event-loop delay p99
${waiting.eventLoopDelayP99Ms} ms (max ${waiting.eventLoopDelayMaxMs} ms) while they were open.

`;
}

/** The OAuth section of docs/benchmarks.md (empty for runs from before it existed). */
function oauthSection(oauth) {
  if (!oauth) return "";
  const row = (name, figures) => [name, figures.rps, `${figures.cpuUsPerCall} µs (${figures.cpuRuns.join(", ")})`, `${figures.sequentialP50Us} µs`];
  return `## MCP over OAuth

One \`ask\` tool call (the instant upstream) at \`/oauth/mcp\` with an access token, against the same call at \`/mcp\`
with the key, on one adapter with \`MCP_OAUTH=on\`; and at \`/mcp\` on an adapter with \`MCP_OAUTH=off\` (the OAuth library
never loaded). CPU per call at 50 connections (each round in brackets), and the median latency one call at a time.

${table([
  ["", "requests/s", "CPU per call", "latency p50 (sequential)"],
  ["---", "---", "---", "---"],
  row("`/mcp`, key, MCP_OAUTH=off", oauth.keyOauthOff),
  row("`/mcp`, key, MCP_OAUTH=on", oauth.keyOauthOn),
  row("`/oauth/mcp`, access token", oauth.token),
])}

The token's validation added ${oauth.addedCpuUsByToken} µs of CPU and ${oauth.addedLatencyUsByToken} µs of latency per call (medians of the
per-round differences); turning OAuth on changed a static-key call by ${oauth.addedCpuUsByOauthOn} µs of CPU.

`;
}

/** The chat UIs' housekeeping section of docs/benchmarks.md (empty for runs from before it existed). */
function chatUiTasksSection(tasks) {
  if (!tasks) return "";
  const { recognition } = tasks;
  const row = (name, figures) => [name, `${figures.p50Us} µs`, `${figures.p99Us} µs`, figures.rps, `${figures.cpuUs} µs`];
  const load = tasks.loadAverage ? `, load average ${tasks.loadAverage.join(" to ")} on the ${"machine's"} cores` : "";
  const measured = tasks.date ? ` (measured ${tasks.date.slice(0, 10)}${tasks.commit ? `, commit ${tasks.commit}` : ""}${load})` : "";
  return `## Chat UIs' housekeeping

Open WebUI's title request as Open WebUI sends it (its 0.6 template, with \`X-OpenWebUI-Chat-Id\`),
answered by the adapter (\`CHAT_UI_TASKS=local\`, the default) and passed on to the instant upstream
(\`workspace\`), beside an ordinary question${measured}; ${tasks.rounds} rounds taking turns, 500 sequential
requests and ${tasks.seconds} s at 50 connections each, medians:

${table([
  ["", "p50, one at a time", "p99", "requests/s at 50 connections", "adapter CPU per request"],
  ["---", "---", "---", "---", "---"],
  row("title, answered by the adapter", tasks.titleLocal),
  row("title, passed on to the workspace", tasks.titleByWorkspace),
  row("an ordinary question", tasks.question),
])}

Recognising the frames, per request (this process, the adapter's own function; median of 7 batches):
an ordinary question ${recognition.ordinaryNs.shortQuestion} ns; a system prompt and 40 turns of history ${recognition.ordinaryNs.systemAndHistory} ns; a 100 KB question
${recognition.ordinaryNs.longQuestion} ns; a question starting \`### Task:\` without a history ${recognition.ordinaryNs.taskLikeQuestion} ns; a housekeeping request, read whole
(conversation quoted, kind found) ${recognition.housekeepingNs} ns. The worst ordinary case is ${recognition.worstOrdinaryShareOfRequestCpu}% of the adapter's CPU
per ordinary request.

`;
}

function backgroundSection(background) {
  if (!background) return "";
  const { inFlight, events } = background;
  const load = background.loadAverage ? `, load average ${background.loadAverage.join(" to ")} on the ${"machine's"} cores` : "";
  const resume = (name, figures) => (figures ? [[name, `${figures.resume.p50Us} µs`, `${figures.resume.p99Us} µs`]] : []);
  return `## Background responses

Responses API background mode ([responses-api.md](responses-api.md#background-mode)), measured
${background.date.slice(0, 10)}${load}. **Memory:** ${inFlight.inFlight} background answers in flight (their
queries stalled upstream; state in process) take ${inFlight.heapKBPerAnswer} KB of heap and ${inFlight.rssKBPerAnswer} KB of RSS each
above the adapter's own after a warm-up (RSS ${inFlight.baselineRssMB} MB → ${inFlight.rssMB} MB).${
  events.redis
    ? ` **Redis:** an answer's event log holds ${events.redis.eventsPerAnswer} events (a short
\`ask\` answer with citations), ${events.redis.bytesPerEvent} bytes each (\`MEMORY USAGE\` of the list over its length); its record
(the response object, and what a replica that takes it over needs) ${events.redis.recordBytes} bytes.`
    : " (No redis-server: the Redis figures were skipped.)"
}
**Resuming:** \`GET /v1/responses/{id}?stream=true&starting_after=2\` of a finished answer, one at a
time, from the request to its first event:

${table([["", "p50", "p99"], ["---", "---", "---"], ...resume("state in process", events.memory), ...resume("state in Redis", events.redis)])}

`;
}

/** The Redis Cluster failover section of docs/benchmarks.md (empty for runs from before it existed, or without redis-server). */
function failoverSection(failover) {
  if (!failover) return "";
  if (failover.skipped) return `## Redis Cluster failover\n\nSkipped: ${failover.skipped}.\n\n`;
  const times = (figures) => `${figures.p50Ms} / ${figures.p99Ms} / ${figures.maxMs} ms`;
  const delays = (loads) => loads.adapters.map((adapter) => adapter.loopDelayP99Ms).join(", ");
  const servedSlowly = (loads) => loads.readers.reduce((sum, reader) => sum + reader.readsOver100Ms, 0);
  const served = (loads) => loads.readers.reduce((sum, reader) => sum + reader.readsServed, 0);
  return `## Redis Cluster failover

Measured ${failover.date.slice(0, 10)} (${failover.commit ?? "?"}) by \`BENCH_ONLY=failover\` ([scale-out.md](scale-out.md#in-a-failover)): three adapter
processes share a Redis Cluster of three masters with a replica each (\`cluster-require-full-coverage no\`, node timeout
1 s, \`REDIS_COMMAND_TIMEOUT_MS\` ${failover.boundMs} ms), with ${failover.waiting} chat completions waiting on them all the while. Two of them
read ${failover.stored} stored responses over and over: for 3.5 s with nothing failing, then from a \`SIGKILL\` of the master that
holds the workspace's polling lease until its replica has taken its slots over, and a second more. Each row is one
failover on a fresh cluster; times are the reader's, from request to the end of the response.

${table([
  ["failover", "replica promoted", "live masters' keys, nothing failing (p50 / p99 / max)", "live masters' keys, through the kill", "killed master's keys: p99 (200 / 503)", "last refused", "adapters' event-loop delay p99, nothing failing → through the kill", "reads the adapters served in over 100 ms, through the kill"],
  ["---", "---", "---", "---", "---", "---", "---", "---"],
  ...failover.runs.map((run, index) => [
    String(index + 1),
    `${run.promotedAfterMs} ms`,
    times(run.normal),
    times(run.liveMasters),
    `${run.killedMaster.p99Ms} ms (${run.killedMaster.statuses[200] ?? 0} / ${run.killedMaster.statuses[503] ?? 0})`,
    `${run.lastRefusedAfterMs} ms`,
    `${delays(run.adapters.normal)} → ${delays(run.adapters.failover)} ms`,
    `${servedSlowly(run.adapters.failover)} of ${served(run.adapters.failover)}`,
  ]),
])}

Medians of the p99s: ${failover.medianP99Ms.normal} ms with nothing failing, ${failover.medianP99Ms.liveMasters} ms for the live masters' keys through the
kill, ${failover.medianP99Ms.killedMaster} ms for the killed master's. "Last refused" is when the last 503 for a key of the killed master
came, after the kill: its keys are served again that long after the kill, shortly after the promotion.

`;
}

/** The headings of the sections a part measured alone (`BENCH_MERGE`) writes again. */
const SECTION_HEADINGS = {
  tracing: "## Tracing",
  failover: "## Redis Cluster failover",
  cpu: "## CPU per request, side by side",
  governance: "## Usage counting and the audit trail: what they cost",
  structured: "## Structured answers",
};

/**
 * Writes `heading`'s section of docs/benchmarks.md from `results`: in place of the one there, or,
 * the first time, where the page as a whole would have it (before the section that follows it there).
 */
function replaceSection(heading, results) {
  const page = new URL("../docs/benchmarks.md", here);
  const whole = writeDocs(results, { write: false });
  const sectionOf = (text) => {
    const start = text.indexOf(`${heading}\n`);
    if (start < 0) return undefined;
    const next = text.indexOf("\n## ", start + heading.length);
    return { start, end: next < 0 ? text.length : next + 1 };
  };
  const fresh = sectionOf(whole);
  if (!fresh) return;
  const section = whole.slice(fresh.start, fresh.end);
  const current = readFileSync(page, "utf8");
  const old = sectionOf(current);
  if (old) {
    writeFileSync(page, current.slice(0, old.start) + section + current.slice(old.end));
    return;
  }
  const following = whole.slice(fresh.end).match(/^## .*$/m)?.[0];
  const at = following ? current.indexOf(`\n${following}\n`) + 1 : current.length;
  writeFileSync(page, current.slice(0, at) + section + current.slice(at));
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

/** The last five kept runs, oldest first. */
function recentRuns() {
  const folder = new URL("results/runs/", here);
  let names = [];
  try {
    names = readdirSync(folder).filter((name) => name.endsWith(".json")).sort();
  } catch {
    return [];
  }
  return names.slice(-5).map((name) => JSON.parse(readFileSync(new URL(name, folder), "utf8")));
}

function table(rows) {
  return rows.map((row) => `| ${row.join(" | ")} |`).join("\n");
}

if (process.env.BENCH_DOCS_ONLY) {
  const latest = JSON.parse(readFileSync(new URL("results/latest.json", here), "utf8"));
  // BENCH_DOCS_ONLY=<part> (one with a section of its own, such as failover) writes that section only.
  const heading = SECTION_HEADINGS[process.env.BENCH_DOCS_ONLY];
  if (heading) replaceSection(heading, latest);
  else writeDocs(latest);
  console.log(`wrote ${heading ? `the section "${heading}" of ` : ""}docs/benchmarks.md from bench/results/latest.json`);
  process.exit(0);
}

try {
  const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? "unknown", memoryGB: round(totalmem() / 2 ** 30, 1), node: process.version };
  console.log(`machine: ${JSON.stringify(machine)}; ${SECONDS} s per run, median of ${REPEATS}`);
  // BENCH_ONLY=latency|cpu|waiting|streams|tokens|realtime|channels|replicas|redis|tracing|limits|governance|mcp|chat-ui-tasks|structured|oauth|background|failover runs one part (for trying changes; nothing is written unless BENCH_MERGE=1).
  const only = process.env.BENCH_ONLY;
  const measured = {};
  const part = async (name, run) => {
    if (only && only !== name) return undefined;
    const result = await run();
    measured[name] = result;
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
  const mcp = await part("mcp", async () => ({ cost: await toolCallCost(start, { seconds: SECONDS, repeats: REPEATS }), waiting: await waitingToolCalls(start) }));
  const chatUiTasks = await part("chat-ui-tasks", () => chatUiTaskCost(start));
  const structured = await part("structured", async () => ({ ...(await structuredCost(start)), commit: currentCommit() }));
  const oauth = await part("oauth", () => oauthCost(start, { seconds: SECONDS, repeats: REPEATS }));
  const background = await part("background", () => backgroundCost(start));
  const failover = await part("failover", async () => ({ date: new Date().toISOString(), commit: currentCommit(), ...(await clusterFailover(start, { repeats: REPEATS })) }));
  if (only) {
    // BENCH_MERGE=1: the part measured alone replaces its own in bench/results/latest.json (it carries its
    // own date and commit), and its section of docs/benchmarks.md is written again; the rest of the page,
    // notes added by hand included, is left as it is.
    if (process.env.BENCH_MERGE && measured[only] !== undefined) {
      const latest = JSON.parse(readFileSync(new URL("results/latest.json", here), "utf8"));
      latest[{ "chat-ui-tasks": "chatUiTasks" }[only] ?? only] = measured[only];
      writeFileSync(new URL("results/latest.json", here), `${JSON.stringify(latest, null, 2)}\n`);
      const heading = SECTION_HEADINGS[only];
      if (heading) replaceSection(heading, latest);
      console.log(`merged ${only} into bench/results/latest.json${heading ? ` and its section "${heading}" into docs/benchmarks.md` : ""}`);
    }
    process.exit(0);
  }

  const results = { date: new Date().toISOString(), commit: currentCommit(), machine, seconds: SECONDS, repeats: REPEATS, latency, cpu, waiting, streams, tokens, realtime, channels, replicas, redis, tracing, limits, governance, mcp, chatUiTasks, structured, oauth, background, failover };
  mkdirSync(new URL("results/", here), { recursive: true });
  writeFileSync(new URL("results/latest.json", here), `${JSON.stringify(results, null, 2)}\n`);
  // Every run is kept: on a noisy machine one run is one sample, and the docs show the recent ones.
  mkdirSync(new URL("results/runs/", here), { recursive: true });
  writeFileSync(new URL(`results/runs/${results.date.replaceAll(":", "-")}.json`, here), `${JSON.stringify(results, null, 2)}\n`);
  writeDocs(results);

  console.log("wrote bench/results/latest.json and docs/benchmarks.md");
} finally {
  for (const child of children) child.kill();
}
