// CPU per request, side by side in one run (`BENCH_ONLY=cpu npm run bench`, also part of `npm run
// bench`): the bare node:http proxy (the issue's yardstick: the same two HTTP hops), the translation
// floor (bench/translation-floor.mjs: what any JSON-translating adapter on the adapter's HTTP pieces
// costs before a feature), the adapter's chat
// completion and Responses create, the chat completion traced at sampling 1.0 (OTLP/HTTP to a sink
// in another process), a structured answer (response_format json_schema, validated; bench/structured.mjs's
// request), and one MCP `ask` tool call on each revision, all against the instant
// upstream at 50 connections. CPU is each server process's own (user + system, its worker threads
// included, from its IPC stats) over the requests it served. The kinds take turns, in alternating
// order round after round, so that each round's ratios share the shared machine's mood of the
// moment; medians and ranges over rounds are reported. BENCH_BASE=<an older built checkout> adds
// that checkout's adapter (its own dist/, untraced) for the chat, Responses and MCP rows, taking
// turns with this one's: the rows named `…Base` and the ratios `…OverBase`.
import { readdirSync, readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import autocannon from "autocannon";
import { cpus, loadavg, totalmem } from "node:os";
import { LEAD_SECONDS, LOADED_ADAPTER, steadyWindow } from "./processes.mjs";
import { legacyCall, modernCall } from "./mcp.mjs";
import { bodies as structuredBodies } from "./structured.mjs";

const round = (value, digits = 0) => Math.round(value * 10 ** digits) / 10 ** digits;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const question = "How much annual leave do employees get?";
const auth = { authorization: "Bearer bench-key", "service-workspace": "bench", "content-type": "application/json" };

/** The rows of the table, in order: which process serves each and what it is sent. */
function kindsOf({ proxy, floor, adapter, traced, base }) {
  const chatBody = JSON.stringify({ model: "ask", messages: [{ role: "user", content: question }] });
  const baseKinds = base
    ? {
        chatBase: { server: base, url: `${base.url}/v1/chat/completions`, headers: auth, body: chatBody },
        responsesBase: { server: base, url: `${base.url}/v1/responses`, headers: auth, body: JSON.stringify({ model: "ask", input: question }) },
        mcp20251125Base: { server: base, url: `${base.url}/mcp`, ...legacyCall(false) },
        mcp20260728Base: { server: base, url: `${base.url}/mcp`, ...modernCall() },
      }
    : {};
  return {
    ...baseKinds,
    bareProxy: { server: proxy, url: `${proxy.url}/v1/chat/completions`, headers: auth, body: JSON.stringify({ model: "ask", messages: [{ role: "user", content: question }] }) },
    floor: { server: floor, url: `${floor.url}/v1/chat/completions`, headers: auth, body: JSON.stringify({ model: "ask", messages: [{ role: "user", content: question }] }) },
    chat: { server: adapter, url: `${adapter.url}/v1/chat/completions`, headers: auth, body: JSON.stringify({ model: "ask", messages: [{ role: "user", content: question }] }) },
    responses: { server: adapter, url: `${adapter.url}/v1/responses`, headers: auth, body: JSON.stringify({ model: "ask", input: question }) },
    structured: { server: adapter, url: `${adapter.url}/v1/chat/completions`, headers: auth, body: structuredBodies.structured },
    chatTraced: { server: traced, url: `${traced.url}/v1/chat/completions`, headers: auth, body: JSON.stringify({ model: "ask", messages: [{ role: "user", content: question }] }) },
    mcp20251125: { server: adapter, url: `${adapter.url}/mcp`, ...legacyCall(false) },
    mcp20260728: { server: adapter, url: `${adapter.url}/mcp`, ...modernCall() },
  };
}

/** The ratios reported per round (each round's own figures): name → [numerator, denominator]. */
const RATIOS = {
  chatOverBareProxy: ["chat", "bareProxy"],
  floorOverBareProxy: ["floor", "bareProxy"],
  responsesOverBareProxy: ["responses", "bareProxy"],
  tracedOverChat: ["chatTraced", "chat"],
  structuredOverChat: ["structured", "chat"],
  mcp20251125OverChat: ["mcp20251125", "chat"],
  mcp20260728OverChat: ["mcp20260728", "chat"],
};

/** The ratios against the base checkout's adapter (BENCH_BASE), when it runs. */
const BASE_RATIOS = {
  chatOverBase: ["chat", "chatBase"],
  responsesOverBase: ["responses", "responsesBase"],
  mcp20251125OverBase: ["mcp20251125", "mcp20251125Base"],
  mcp20260728OverBase: ["mcp20260728", "mcp20260728Base"],
};

/** Measures every kind for `rounds` rounds of `seconds` each; every process `start` starts is the caller's to stop. */
export async function cpuPerRequest(start, { seconds, rounds, base: baseCheckout = process.env.BENCH_BASE }) {
  const loadBefore = loadavg()[0];
  const upstream = await start("instant-upstream.mjs");
  const sink = await start("otlp-sink.mjs");
  const proxy = await start("bare-proxy.mjs", { UPSTREAM_PORT: String(upstream.port) });
  const floor = await start("translation-floor.mjs", { UPSTREAM_PORT: String(upstream.port) });
  // Whatever the shell exports, only the traced adapter traces.
  const untraced = { UPSTREAM_URL: upstream.url, ...LOADED_ADAPTER, OTEL_EXPORTER_OTLP_ENDPOINT: "", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "" };
  const adapter = await start("adapter-process.mjs", untraced);
  const traced = await start("adapter-process.mjs", { ...untraced, OTEL_EXPORTER_OTLP_ENDPOINT: sink.url });
  const base = baseCheckout ? await start(pathToFileURL(`${baseCheckout}/bench/adapter-process.mjs`).href, untraced) : undefined;
  const kinds = kindsOf({ proxy, floor, adapter, traced, base });
  // Each round measures a window of steady load (steadyWindow, bench/processes.mjs).
  const once = async (kind, duration) => {
    const load = (loadSeconds) => autocannon({ url: kind.url, method: "POST", headers: kind.headers, body: kind.body, connections: 50, duration: loadSeconds });
    const window = await steadyWindow(kind.server.child, load, duration, () => threadTimes(kind.server.child.pid));
    const { before, after, requests, result, snapshotBefore, snapshotAfter } = window;
    if (result.errors || result.non2xx) throw new Error(`${kind.url}: ${result.errors} errors, ${result.non2xx} non-2xx`);
    const threads = snapshotBefore && snapshotAfter ? perRequest(snapshotBefore, snapshotAfter, requests) : undefined;
    return { rps: requests / window.seconds, cpuUs: (after.cpuMicros - before.cpuMicros) / requests, threads };
  };
  for (const kind of Object.values(kinds)) await once(kind, 2); // warm-up, discarded
  const names = Object.keys(kinds);
  const figures = [];
  for (let index = 0; index < rounds; index += 1) {
    const turn = {};
    for (const name of index % 2 === 0 ? names : [...names].reverse()) turn[name] = await once(kinds[name], seconds);
    figures.push(turn);
  }
  for (const server of [upstream, sink, proxy, floor, adapter, traced, base]) server?.child.kill();
  const spread = (values) => ({ median: median(values), min: Math.min(...values), max: Math.max(...values) });
  const rows = {};
  for (const name of names) {
    const cpu = spread(figures.map((turn) => turn[name].cpuUs));
    rows[name] = {
      cpuUsPerRequest: round(cpu.median),
      cpuUsRange: [round(cpu.min), round(cpu.max)],
      rps: round(median(figures.map((turn) => turn[name].rps))),
      overBareProxy: round(median(figures.map((turn) => turn[name].cpuUs / turn.bareProxy.cpuUs)), 2),
      ...(figures[0][name].threads
        ? { threadsUs: Object.fromEntries(THREADS.map((thread) => [thread, round(median(figures.map((turn) => turn[name].threads[thread])))])) }
        : {}),
    };
  }
  const ratios = {};
  for (const [name, [numerator, denominator]] of Object.entries({ ...RATIOS, ...(base ? BASE_RATIOS : {}) })) {
    const per = spread(figures.map((turn) => turn[numerator].cpuUs / turn[denominator].cpuUs));
    ratios[name] = { median: round(per.median, 2), min: round(per.min, 2), max: round(per.max, 2) };
  }
  const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? "unknown", memoryGB: round(totalmem() / 2 ** 30, 1), node: process.version };
  const loadAverage = [round(loadBefore, 1), round(loadavg()[0], 1)];
  return { date: new Date().toISOString(), machine, seconds, leadSeconds: LEAD_SECONDS, rounds, loadAverage, ...(base ? { base: baseCheckout } : {}), rows, ratios };
}

/** The threads a server process's CPU time is told apart by (Linux names them; elsewhere nothing is split). */
const THREADS = ["main", "gc", "workers", "other"];

/** Each thread's CPU time so far (user + system, µs) by kind, from /proc; undefined where there is no /proc. */
function threadTimes(pid) {
  const times = { main: 0, gc: 0, workers: 0, other: 0 };
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // utime and stime, in clock ticks (100 a second on Linux).
      const micros = (Number(fields[11]) + Number(fields[12])) * 10_000;
      // V8's platform threads do the garbage collector's parallel and concurrent work; worker_threads Workers are named WorkerThread.
      const kind = Number(task) === pid ? "main" : name === "V8Worker" ? "gc" : name === "WorkerThread" ? "workers" : "other";
      times[kind] += micros;
    }
  } catch {
    return undefined;
  }
  return times;
}

function perRequest(before, after, requests) {
  return Object.fromEntries(THREADS.map((thread) => [thread, (after[thread] - before[thread]) / requests]));
}
