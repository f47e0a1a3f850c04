// What WebSocket mode of the Responses API costs (`BENCH_ONLY=websocket node bench/run.mjs`, or
// `node bench/websocket.mjs` alone; docs/responses-api.md#websocket-mode): one turn at a time over a
// WebSocket against the same turn over HTTP (the same question, streamed as SSE, and as one JSON
// body), in the adapter's own process in front of the instant upstream: the client's latency per
// turn (p50, p99) and the adapter's CPU per turn, rounds taking turns; then what an idle socket
// costs: the adapter's heap and RSS, after a GC, with IDLE sockets open against none.
// Knobs: BENCH_WS_TURNS (per round, default 400), BENCH_REPEATS (rounds, default 3), BENCH_WS_IDLE (default 1000).
import { pathToFileURL } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { Agent, request } from "undici";
import { WebSocket } from "ws";
import { adapterEnvironment, startProcess, statsOf } from "./processes.mjs";

const QUESTION = "How much annual leave do employees get?";
const headers = { authorization: "Bearer bench-key", "service-workspace": "bench", "content-type": "application/json" };
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const percentile = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))];
const round = (value, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

/** Opens a Responses WebSocket on the adapter; resolves once open. */
function openSocket(url) {
  const socket = new WebSocket(`${url.replace(/^http/, "ws")}/v1/responses`, { headers: { authorization: headers.authorization, "service-workspace": "bench" } });
  return new Promise((resolve, reject) => {
    socket.once("open", () => resolve(socket));
    socket.once("error", reject);
  });
}

/** `count` turns one at a time on one socket (after `warmUp` more): each sent, read to `response.completed`; latencies in µs. */
async function socketTurns(url, count, warmUp) {
  const socket = await openSocket(url);
  const message = JSON.stringify({ type: "response.create", model: "ask", input: QUESTION, store: false });
  const samples = [];
  let done;
  socket.on("message", (data) => {
    // The terminal event is the last: a cheap test of its type before parsing it whole.
    const text = String(data);
    if (text.startsWith('{"type":"response.completed"') || text.includes('"type":"response.completed"')) done();
    else if (text.includes('"type":"error"')) throw new Error(`error event: ${text}`);
  });
  for (let index = 0; index < count + warmUp; index += 1) {
    const started = process.hrtime.bigint();
    await new Promise((resolve) => {
      done = resolve;
      socket.send(message);
    });
    if (index >= warmUp) samples.push(Number(process.hrtime.bigint() - started) / 1000);
  }
  socket.close();
  return samples;
}

/** `count` turns one at a time over one keep-alive HTTP connection (after `warmUp` more), each read whole; latencies in µs. */
async function httpTurns(url, count, warmUp, stream) {
  const dispatcher = new Agent({ connections: 1 });
  const body = JSON.stringify({ model: "ask", input: QUESTION, store: false, stream });
  const samples = [];
  for (let index = 0; index < count + warmUp; index += 1) {
    const started = process.hrtime.bigint();
    const response = await request(`${url}/v1/responses`, { method: "POST", headers, body, dispatcher });
    await response.body.text();
    if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}`);
    if (index >= warmUp) samples.push(Number(process.hrtime.bigint() - started) / 1000);
  }
  await dispatcher.close();
  return samples;
}

/** The adapter's heap and RSS after a GC with `count` idle sockets open, against none: bytes per socket. */
async function idleSockets(adapter, count) {
  const before = await statsOf(adapter.child, "stats-after-gc");
  const sockets = [];
  for (let index = 0; index < count; index += 1) sockets.push(openSocket(adapter.url));
  const open = await Promise.all(sockets);
  await sleep(500);
  const after = await statsOf(adapter.child, "stats-after-gc");
  await Promise.all(open.map((socket) => new Promise((resolve) => {
    socket.once("close", resolve);
    socket.close();
  })));
  await sleep(500);
  const closed = await statsOf(adapter.child, "stats-after-gc");
  return {
    sockets: count,
    heapBytesPerSocket: Math.round((after.heapUsedBytes - before.heapUsedBytes) / count),
    rssBytesPerSocket: Math.round((after.rssBytes - before.rssBytes) / count),
    externalBytesPerSocket: Math.round((after.externalBytes - before.externalBytes) / count),
    heapBytesLeftAfterClose: closed.heapUsedBytes - before.heapUsedBytes,
  };
}

/** Runs the part (one key opens the idle sockets: its per-key bound is raised above them); every process it started is stopped at the end. */
export async function webSocketCost({ turns = 400, rounds = 3, idle = 1000 } = {}) {
  const children = [];
  try {
    const upstream = await startProcess("instant-upstream.mjs", {});
    children.push(upstream.child);
    const adapter = await startProcess("adapter-process.mjs", { ...adapterEnvironment(upstream.url), LOG_LEVEL: "warn", WEBSOCKET_MAX_PER_KEY: String(idle + 10) }, ["--expose-gc"]);
    children.push(adapter.child);
    const kinds = {
      websocket: (count, warmUp) => socketTurns(adapter.url, count, warmUp),
      sse: (count, warmUp) => httpTurns(adapter.url, count, warmUp, true),
      json: (count, warmUp) => httpTurns(adapter.url, count, warmUp, false),
    };
    const names = Object.keys(kinds);
    for (const name of names) await kinds[name](100, 0); // warm-up, discarded
    const figures = Object.fromEntries(names.map((name) => [name, []]));
    for (let index = 0; index < rounds; index += 1) {
      for (const name of index % 2 === 0 ? names : [...names].reverse()) {
        const before = await statsOf(adapter.child);
        const samples = await kinds[name](turns, 20);
        const after = await statsOf(adapter.child);
        figures[name].push({ p50Us: percentile(samples, 50), p99Us: percentile(samples, 99), cpuUs: (after.cpuMicros - before.cpuMicros) / (turns + 20) });
      }
    }
    const perKind = Object.fromEntries(
      names.map((name) => [name, {
        p50Us: round(median(figures[name].map((figure) => figure.p50Us))),
        p99Us: round(median(figures[name].map((figure) => figure.p99Us))),
        cpuUsPerTurn: round(median(figures[name].map((figure) => figure.cpuUs))),
      }]),
    );
    const added = (name) => ({
      p50Us: round(perKind.websocket.p50Us - perKind[name].p50Us),
      cpuUsPerTurn: round(perKind.websocket.cpuUsPerTurn - perKind[name].cpuUsPerTurn),
    });
    return { turnsPerRound: turns, rounds, ...perKind, websocketAgainstSse: added("sse"), websocketAgainstJson: added("json"), idle: await idleSockets(adapter, idle) };
  } finally {
    for (const child of children) child.kill();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const result = await webSocketCost({
    turns: Number(process.env.BENCH_WS_TURNS ?? 400),
    rounds: Number(process.env.BENCH_REPEATS ?? 3),
    idle: Number(process.env.BENCH_WS_IDLE ?? 1000),
  });
  console.log(JSON.stringify(result, null, 2));
}
