// The benchmark's servers run as child processes of their own; this starts one and asks it for stats.
import { fork } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import autocannon from "autocannon";
import { Agent, request } from "undici";
import { contextFrameFlags } from "../dist/src/telemetry/context-frame.js";

const here = new URL(".", import.meta.url);

/** The adapter's settings for a load run: logging as `npm start` has it, the concurrency caps out of the way. */
export const LOADED_ADAPTER = {
  DEFAULT_WORKSPACE: "bench",
  LOG_LEVEL: "info",
  LOG_FORMAT: "json",
  MAX_CONCURRENT_REQUESTS: "100000",
  MAX_CONCURRENT_PER_WORKSPACE: "100000",
};

/**
 * The node flags a process runs with: those given, and for this checkout's adapter the one `main.ts`
 * executes itself again with on Node 22 when tracing is on (src/telemetry/context-frame.ts), so that
 * the benchmark's adapters run as `npm start` runs them (an older checkout's, named by its URL, as
 * its own did: without).
 */
function adapterFlags(file, env, execArgv) {
  if (file !== "adapter-process.mjs") return execArgv;
  return contextFrameFlags({ env, version: process.version, execArgv }) ?? execArgv;
}

/** Forks `file` (beside this one) and resolves once it reports its port. */
export function startProcess(file, env = {}, execArgv = []) {
  return new Promise((resolve, reject) => {
    const environment = { ...process.env, ...env };
    const child = fork(new URL(file, here), [], { env: environment, execArgv: adapterFlags(file, environment, execArgv), stdio: ["ignore", "ignore", "inherit", "ipc"] });
    child.once("error", reject);
    child.once("message", (message) => resolve({ child, port: message.port, url: `http://127.0.0.1:${message.port}` }));
  });
}

/**
 * The embedded workspace (queries that never finish on request) and an adapter in front of it,
 * each started with `start` (the caller's, which keeps track of its processes).
 */
export async function startWorkspaceAndAdapter(start, env, workspaceEnv = { STEP_DELAY_MS: "0" }) {
  const workspace = await start("embedded-process.mjs", workspaceEnv);
  const adapter = await start("adapter-process.mjs", {
    UPSTREAM_URL: workspace.url,
    DEFAULT_WORKSPACE: "bench",
    LOG_LEVEL: "warn",
    QUERY_TIMEOUT_MS: "600000",
    ...env,
  });
  return { workspace, adapter };
}

/** Asks an adapter process (adapter-process.mjs) for its memory, event-loop delay and counters. */
export function statsOf(child, request = "stats") {
  return new Promise((resolve) => {
    const listener = (message) => {
      if (message.stats) {
        child.off("message", listener);
        resolve(message.stats);
      }
    };
    child.on("message", listener);
    child.send(request);
  });
}

/**
 * Seconds of load before a window of steady load is counted. An adapter that sat idle through the
 * other rows' turns (about 45 s in bench/cpu.mjs) sometimes costs more per request for a few seconds
 * after the load resumes (docs/benchmarks.md#cpu-per-request-side-by-side).
 */
export const LEAD_SECONDS = 5;

/**
 * Measures a window of steady load (bench/cpu.mjs, bench/tracing.mjs): `startLoad(duration)` runs the load
 * for the window, the lead before it and half a second more; the process's stats are taken `LEAD_SECONDS`
 * in and `seconds` later, so that neither a process waking from other rows' turns nor the connections
 * opened at the start and cut mid-request at the end are counted as requests' CPU. `snapshot` reads
 * whatever else is compared at the window's edges (a process's per-thread times), just outside the stats.
 */
export async function steadyWindow(child, startLoad, seconds, snapshot = () => undefined) {
  const load = startLoad(LEAD_SECONDS + seconds + 0.5);
  await sleep(LEAD_SECONDS * 1000);
  const snapshotBefore = snapshot();
  const before = await statsOf(child);
  const started = performance.now();
  await sleep(seconds * 1000);
  const after = await statsOf(child);
  const snapshotAfter = snapshot();
  const windowSeconds = (performance.now() - started) / 1000;
  const result = await load;
  return { before, after, snapshotBefore, snapshotAfter, seconds: windowSeconds, requests: after.requests - before.requests, result };
}

/** The environment of an adapter process measured at 50 connections against `upstreamUrl` (no cap gets in the way). */
export function adapterEnvironment(upstreamUrl) {
  return { UPSTREAM_URL: upstreamUrl, ...LOADED_ADAPTER };
}

/** A chat request body for the benchmark (streamed when `stream`). */
export function chatBody(stream = false) {
  return JSON.stringify({ model: "ask", stream, messages: [{ role: "user", content: "How much annual leave do employees get?" }] });
}

/** autocannon against an adapter's chat endpoint at 50 connections. */
export function loadAdapter(adapterUrl, { seconds, stream = false }) {
  return autocannon({
    url: `${adapterUrl}/v1/chat/completions`,
    method: "POST",
    headers: { authorization: "Bearer k", "content-type": "application/json" },
    body: chatBody(stream),
    connections: 50,
    duration: seconds,
  });
}

/**
 * Opens `count` requests that stay open (`open(index, dispatcher, signal)` starts one and resolves
 * when its response ends), samples the adapter's RSS while they open (until `isOpen(stats)`) and
 * every half second for 10 s after, with its event-loop delay measured over those 10 s; then
 * aborts them all. The highest RSS sample is what counts.
 */
export async function holdOpen(adapterChild, count, open, isOpen) {
  const dispatcher = new Agent({ connections: count + 10, headersTimeout: 120_000, bodyTimeout: 120_000 });
  const controllers = [];
  const opened = [];
  for (let index = 0; index < count; index += 1) {
    const controller = new AbortController();
    controllers.push(controller);
    opened.push(open(index, dispatcher, controller.signal).catch(() => null));
    if (index % 500 === 499) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const deadline = Date.now() + 60_000;
  let peakRss = 0;
  for (let opening = await statsOf(adapterChild); !isOpen(opening) && Date.now() < deadline; opening = await statsOf(adapterChild)) {
    peakRss = Math.max(peakRss, opening.rssBytes);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  adapterChild.send("reset");
  for (let sample = 0; sample < 20; sample += 1) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    peakRss = Math.max(peakRss, (await statsOf(adapterChild)).rssBytes);
  }
  const stats = await statsOf(adapterChild);
  for (const controller of controllers) controller.abort();
  await Promise.all(opened);
  await dispatcher.close();
  return { stats, peakRssBytes: Math.max(peakRss, stats.rssBytes) };
}

/**
 * Latencies of `count` requests sent one at a time (after `warmUp` more, discarded), in
 * microseconds, each read whole; any status but 200 stops the run.
 */
export async function sequentialLatencies(url, { headers, body, count, warmUp = 100 }) {
  const dispatcher = new Agent({ connections: 1 });
  const samples = [];
  for (let index = 0; index < count + warmUp; index += 1) {
    const started = process.hrtime.bigint();
    const response = await request(url, { method: "POST", headers, body, dispatcher });
    await response.body.text();
    if (response.statusCode !== 200) throw new Error(`${url}: status ${response.statusCode}`);
    if (index >= warmUp) samples.push(Number(process.hrtime.bigint() - started) / 1000);
  }
  await dispatcher.close();
  return samples;
}

const percentileOf = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))];
const medianOf = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const whole = (value) => Math.round(value);

/** p50 and p99 of `count` chat completions one at a time, in microseconds. */
async function chatLatencies(url, headers, body, count) {
  const samples = await sequentialLatencies(`${url}/v1/chat/completions`, { headers, body, count });
  return { p50Us: percentileOf(samples, 50), p99Us: percentileOf(samples, 99) };
}

/** Chat completions at 50 connections for `seconds`: requests/s and the adapter process's CPU per request. */
async function chatLoad(adapter, headers, body, seconds) {
  const before = await statsOf(adapter.child);
  const result = await autocannon({ url: `${adapter.url}/v1/chat/completions`, method: "POST", headers, body, connections: 50, duration: seconds });
  if (result.errors || result.non2xx) throw new Error(`${adapter.url}: ${result.errors} errors, ${result.non2xx} non-2xx`);
  const after = await statsOf(adapter.child);
  return { rps: result.requests.average, cpuUs: (after.cpuMicros - before.cpuMicros) / (after.requests - before.requests) };
}

/**
 * Chat completions of several kinds, `runs` = {name: [adapter, body]}, measured side by side: a
 * warm-up of each, then `rounds` rounds taking turns (in reverse every other round), each kind
 * `sequential` requests one at a time then 50 connections for `seconds`. The median of the rounds
 * per kind (p50/p99 in µs, requests/s, the adapter's CPU per request in µs), and the rounds.
 */
export async function chatRounds(runs, { headers, rounds, sequential, seconds, label }) {
  for (const [adapter, body] of Object.values(runs)) await autocannon({ url: `${adapter.url}/v1/chat/completions`, method: "POST", headers, body, connections: 50, duration: 2 }); // warm-up
  const measured = [];
  for (let index = 0; index < rounds; index += 1) {
    const figures = {};
    const names = Object.keys(runs);
    for (const name of index % 2 ? [...names].reverse() : names) {
      const [adapter, body] = runs[name];
      figures[name] = { ...(await chatLatencies(adapter.url, headers, body, sequential)), ...(await chatLoad(adapter, headers, body, seconds)) };
    }
    measured.push(figures);
    console.log(`${label} round ${index + 1}: ${JSON.stringify(figures)}`);
  }
  const row = (name) => ({
    p50Us: whole(medianOf(measured.map((figures) => figures[name].p50Us))),
    p99Us: whole(medianOf(measured.map((figures) => figures[name].p99Us))),
    rps: whole(medianOf(measured.map((figures) => figures[name].rps))),
    cpuUs: whole(medianOf(measured.map((figures) => figures[name].cpuUs))),
  });
  return { rows: Object.fromEntries(Object.keys(runs).map((name) => [name, row(name)])), rounds: measured };
}

/** Nanoseconds per call of `run(index)` in this process: the median of seven timed batches of `iterations`. */
export function nanosPerCall(run, iterations) {
  const batches = [];
  for (let batch = 0; batch < 7; batch += 1) {
    const started = process.hrtime.bigint();
    for (let index = 0; index < iterations; index += 1) run(index);
    batches.push(Number(process.hrtime.bigint() - started) / iterations);
  }
  return Math.round(medianOf(batches) * 10) / 10;
}
