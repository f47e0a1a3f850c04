// The benchmark's servers run as child processes of their own; this starts one and asks it for stats.
import { fork } from "node:child_process";
import autocannon from "autocannon";
import { Agent, request } from "undici";

const here = new URL(".", import.meta.url);

/** The adapter's settings for a load run: logging as `npm start` has it, the concurrency caps out of the way. */
export const LOADED_ADAPTER = {
  DEFAULT_WORKSPACE: "bench",
  LOG_LEVEL: "info",
  LOG_FORMAT: "json",
  MAX_CONCURRENT_REQUESTS: "100000",
  MAX_CONCURRENT_PER_WORKSPACE: "100000",
};

/** Forks `file` (beside this one) and resolves once it reports its port. */
export function startProcess(file, env = {}, execArgv = []) {
  return new Promise((resolve, reject) => {
    const child = fork(new URL(file, here), [], { env: { ...process.env, ...env }, execArgv, stdio: ["ignore", "ignore", "inherit", "ipc"] });
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
