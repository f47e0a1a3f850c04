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
// moment; medians and ranges over rounds are reported.
import { readdirSync, readFileSync } from "node:fs";
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
function kindsOf({ proxy, floor, adapter, traced }) {
  return {
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

/** Measures every kind for `rounds` rounds of `seconds` each; every process `start` starts is the caller's to stop. */
export async function cpuPerRequest(start, { seconds, rounds }) {
  const loadBefore = loadavg()[0];
  const upstream = await start("instant-upstream.mjs");
  const sink = await start("otlp-sink.mjs");
  const proxy = await start("bare-proxy.mjs", { UPSTREAM_PORT: String(upstream.port) });
  const floor = await start("translation-floor.mjs", { UPSTREAM_PORT: String(upstream.port) });
  // Whatever the shell exports, only the traced adapter traces.
  const untraced = { UPSTREAM_URL: upstream.url, ...LOADED_ADAPTER, OTEL_EXPORTER_OTLP_ENDPOINT: "", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "" };
  const adapter = await start("adapter-process.mjs", untraced);
  const traced = await start("adapter-process.mjs", { ...untraced, OTEL_EXPORTER_OTLP_ENDPOINT: sink.url });
  const kinds = kindsOf({ proxy, floor, adapter, traced });
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
  for (const server of [upstream, sink, proxy, floor, adapter, traced]) server.child.kill();
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
  for (const [name, [numerator, denominator]] of Object.entries(RATIOS)) {
    const per = spread(figures.map((turn) => turn[numerator].cpuUs / turn[denominator].cpuUs));
    ratios[name] = { median: round(per.median, 2), min: round(per.min, 2), max: round(per.max, 2) };
  }
  const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? "unknown", memoryGB: round(totalmem() / 2 ** 30, 1), node: process.version };
  return { date: new Date().toISOString(), machine, seconds, leadSeconds: LEAD_SECONDS, rounds, loadAverage: [round(loadBefore, 1), round(loadavg()[0], 1)], rows, ratios };
}

/** The threads a server process's CPU time is told apart by (Linux names them; elsewhere nothing is split). */
const THREADS = ["main", "gc", "tokens", "other"];

/** Each thread's CPU time so far (user + system, µs) by kind, from /proc; undefined where there is no /proc. */
function threadTimes(pid) {
  const times = { main: 0, gc: 0, tokens: 0, other: 0 };
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // utime and stime, in clock ticks (100 a second on Linux).
      const micros = (Number(fields[11]) + Number(fields[12])) * 10_000;
      // V8's platform threads do the garbage collector's parallel and concurrent work; a worker_threads Worker is the token counter.
      const kind = Number(task) === pid ? "main" : name === "V8Worker" ? "gc" : name === "WorkerThread" ? "tokens" : "other";
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

/** The rows' labels in docs/benchmarks.md. */
const LABELS = {
  bareProxy: "bare `node:http` proxy (the yardstick)",
  floor: "translation floor: undici upstream, JSON in and out, no features",
  chat: "adapter, chat completion",
  responses: "adapter, Responses API",
  structured: "adapter, structured answer (chat, json_schema, validated)",
  chatTraced: "adapter, chat completion traced (sampling 1.0)",
  mcp20251125: "MCP `ask` tool call, 2025-11-25",
  mcp20260728: "MCP `ask` tool call, 2026-07-28",
};

/** The section of docs/benchmarks.md (empty for runs from before it existed). */
export function cpuSection(cpu, table) {
  if (!cpu) return "";
  const { rows, ratios, machine } = cpu;
  const ratio = (figures) => `${figures.median}× (${figures.min}–${figures.max})`;
  return `## CPU per request, side by side

One run, ${cpu.rounds} rounds per row of ${cpu.seconds} s measured within steady load at 50 connections (the load starts
${cpu.leadSeconds ?? 1} s before the window and ends after it), the rows taking turns in alternating order
(measured ${cpu.date.slice(0, 16).replace("T", " ")} on ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGB} GB, Node ${machine.node}, load average ${cpu.loadAverage.join(" → ")}
on the ${machine.cpus} cores shared with other work): each server process's CPU time (user and system, its worker threads
included) over the requests it served, against the instant upstream (\`bench/cpu.mjs\`). Medians, and the range over the rounds.

${table([
  ["", "CPU per request", "range over rounds", "× the bare proxy", "requests/s"],
  ["---", "---", "---", "---", "---"],
  ...Object.entries(rows).map(([name, row]) => [LABELS[name] ?? name, `${row.cpuUsPerRequest} µs`, `${row.cpuUsRange[0]}–${row.cpuUsRange[1]} µs`, `${row.overBareProxy}×`, row.rps]),
])}

Per round, then the median (range): a chat completion ${ratio(ratios.chatOverBareProxy)} the bare proxy's CPU, a Responses create
${ratio(ratios.responsesOverBareProxy)}; traced, a chat completion ${ratio(ratios.tracedOverChat)} an untraced one; an MCP \`ask\` ${ratio(ratios.mcp20251125OverChat)} a chat completion on
2025-11-25 and ${ratio(ratios.mcp20260728OverChat)} on 2026-07-28.${
    ratios.structuredOverChat
      ? ` A structured answer (a three-part question whose JSON answer is longer than the chat row's; [Structured answers](#structured-answers) compares it with the same answer in prose) ${ratio(ratios.structuredOverChat)} a chat completion.`
      : " A structured answer has no row in this run."
  }
${threadsTable(rows, table)}
The ratio to the bare proxy moves from run to run more than most changes measured here: the proxy's own CPU per
request swings with the machine's mood (128 to 185 µs on 2026-11-27 between runs an hour apart), and the
per-round ratios of one run span a factor of 1.3 to 1.5. Compare builds in one run, taking turns; read a ratio to
the proxy as a range, not a figure. Each round measures a window of steady load (since 2026-11-27, 05:50): a
process that sat idle through the other rows' turns had shrunk its young generation and paid for growing it
again, and the fifty requests cut at each round's end deoptimized and recompiled the response path, both counted
as requests' CPU before; that weighed most on the traced row, whose process serves nothing else (1.41× in the
run before this change). Runs since 2026-11-27 08:30 count from 5 s into the load rather than 1 s: a chat
completion process idle for 45 s (about a row's wait here) sometimes still costs more per request for a few seconds
after the load comes back (485, 402, 368, 412, then 353 µs in 1-s windows, against 307, 319, 294, 280, 274 µs after
6 s idle; in a second trial 475, 442, 388, 385, then 325, and in a third none at all), and the rows of this table
idle longest; the longer lead costs the run about a minute and a half. Traced against untraced, run after run on
2026-11-27: here 1.3× and 1.27× (a 06:08 build, 1-s lead), 1.35× (1.15–1.61) at 08:15 (this morning's encoder, 1-s
lead) and 1.25× (09:12); in [Tracing](#tracing), where the two processes take turns alone, 1.21× and 1.215× (the
06:08 build), 1.201× at 08:08 and 1.297× at 09:00 (1-s and 5-s lead). With \`String.prototype\` made fast again
([What shaped these numbers](#what-shaped-these-numbers)), 1.26× (1.05–1.35) here at 10:40 and 1.288× (1.21–1.35) in
[Tracing](#tracing) at 11:00. The 13:31 build added one tick object held for the adapter's life
([What shaped these numbers](#what-shaped-these-numbers)): 1.28× (1.2–1.3) here, and 1.26× (1.18–1.34) at 12:55; in
[Tracing](#tracing) 1.145× (12:30), 1.228× (12:41) and 1.241× (13:17), and 1.003× (0.89–1.07) the traced CPU of the
build before it, taking turns with it (12:33). Neither harness reads systematically higher; a run's median moves by
about ±0.05 on this machine, so tracing's cost reads as 1.15–1.3×. Measured differently, the traced process pays
more than the untraced one for this table's rhythm: two processes taking turns in rounds of 4 s read 1.16–1.19×
(13:20: 354 against 297 µs, with every span dropped 319), and by thread the traced row's garbage collector
threads take 16–22 µs a request against 4 µs untraced, where under 20 s of continuous load perf puts both at about 20
(19 and 20 µs, V8's platform threads, 12:50). In 10 s of continuous load the traced process promoted 713 bytes a
request to the old generation against 415 and ran 9 full collections against 6, so a 5-s round of it more likely
holds one; that the rounds' rhythm is what widens the gap is a likely reading, not yet shown. (Runs whose rounds spread over a factor of two, on a host busy enough to double the proxy's CPU, are left
out of this list and were not published.) Later that day showed why, and the build measured above (2026-11-27 16:23)
mends it: traced, 1.18× (1.06–1.32) here and 1.2× (1.06–1.27) at 15:44 (a run at 16:03, whose untraced chat row spread
from 269 to 502 µs, was left out); in [Tracing](#tracing) 1.161× (15:49). By thread, the event loop took 283 against
248 µs here and 274 against 242 at 15:44 (+51 at 13:31); the garbage collector threads 21 against 5 here and 14 against
13 at 15:44 (+18 at 13:31), so they still vary with whether a round holds a full collection. Each request's three spans had kept their attributes in objects grown as the request
went (about 400 of the 800 bytes a traced request promoted); the traced process ran about five times as many full
collections (6 in 12 s, against 1 in 10 s untraced), and after every one TurboFan compiled again, on the platform threads, the per-request
closures that built those objects (\`--trace-opt\`: two to four \`attributes\`
closures and a few more after each of 6 full collections in 12 s). The spans now keep them as facts
([What shaped these numbers](#what-shaped-these-numbers)): 423–470 bytes (three runs) promoted a request, no full collection in the
same 12 s, and 333 against 352 µs a request traced in 10 paired rounds (283 untraced).

Where the rest goes, 2026-11-27 (after the changes of that morning, below). The translation floor
(\`bench/translation-floor.mjs\`) is what any adapter built on the same HTTP pieces costs before its first feature:
node:http serving, the request parsed, one \`POST /queries\` through undici's dispatch (cheaper per call than
node:http's client, which is why the floor sits at about 0.75× the proxy), the answer parsed, a completion
written. What lies between it and the chat completion row, about 165 µs, is what the adapter does for the
caller. On the event loop (\`bench:profile\`, about 2.6 µs per percent): the answer's citations and sources 7.5%
(marker parsing, the Sources footer, links for three kinds of citation fields), the body's \`JSON.stringify\` 5%
(2.5 KB with some 100 values, against the floor's 0.8 KB; UTF-16 because of one em dash), the close of a request
5% (the log line, metrics, the span and audit hooks), reading, authenticating and validating the request 4%, the
conversation memory 3.5% (a SHA-256 of the history, so that the next turn continues the workspace query), the
upstream answer parsed and checked 4%, planning and the answer's events about 8%, and V8's inline caches
missing on objects of many shapes (node's and undici's as much as the adapter's) about 6%; off the event loop,
usage counted exactly in the token worker (about 22 µs) and the garbage collector's threads (10–15 µs, the
floor's 3). A chat completion measured 1.86× and 1.89× the proxy in two runs of that morning's build (the rounds
ranging up to 2.16× and 2.19×); no item left is over 8% of its event loop.

That morning's changes (each measured side by side with the build before it, 10 rounds of 4 s, and by
\`--trace-gc-nvp\` and per-thread CPU from /proc): each request's context had been kept in a \`WeakMap\` keyed by
its response; V8's minor GC keeps the values of an old \`WeakMap\` alive, and a context reaches its response, so
every request's objects outlived two minor GCs and were promoted (5 KB a request, against the floor's 0.07 KB),
and the minor GCs copying them cost 29 µs of CPU per chat completion. The context is now a property of the
response: 0.4 KB promoted, 6 µs of minor GC, and 5% off a chat completion (300 → 284 µs in paired rounds);
traced at sampling 1.0 against untraced, 1.24× before it and 1.15× after (two runs of 8 rounds). The five metric calls of a request no longer hash their labels through prom-client (2.4 against
0.38 µs in a loop; 0 to 3% in paired rounds). A client that leaves during the upstream call is now a 499 rather
than a 500 logged at error level with a stack, as each of the fifty requests cut at the end of every round had
been.

Where a chat completion's CPU went (2026-11-27, \`bench:profile\` and V8's sampling heap profiler at 50 connections,
before the changes below): the event loop's time was spread thin — writing the response 14% (most of it the
socket write itself), the upstream call through undici 15%, validating the request and the upstream's answer with
zod 3.5%, citations 5%, the log line 2.6%, Prometheus 2–3%, SHA-256 digests (credential, thread key) 2.4%. A
completion allocated about 116 KB: the response body joined to its head (13 KB), citations (14 KB), the upstream
answer parsed and validated (10 KB), the log line (5 KB). The garbage collector's threads took 154 µs of a 729 µs
request against the proxy's 43 µs of 261 µs. Changed then: a JSON body is encoded to UTF-8 once and written as one
buffer beside its head (−4% on a chat completion, paired rounds), a source's Responses file id is hashed once per
answer rather than once per marker, the request's JSON inspection builds a path only for a value it reports.
Changed later that day (each measured side by side with the build before it; each alone is within the ±5% a
pair of runs varies, so the set is what is claimed: 3–7% on a chat completion, and 2–3% on a Responses create): the request's log line built as pino builds it from one \`JSON.stringify\` (6.5 against
3.2 µs a line in a loop; the close of a request 6.5% of the loop before, 4.7% after); a body of 1 KB or more with
a character outside Latin-1 encoded by ICU's transcoder (3.2 against 7.1 µs for this body); the hashes of the
last 1024 credentials remembered (4–5 µs a request on a busy loop); one token-worker job per completion and a
counter a quarter faster on varied text ([Token counting](#token-counting)); a query already ended in its create
answer handed to the answer without the watcher, each step rendered once per snapshot, citations with fewer
scans and arrays, each source linked once per answer. Tried and left out: counting short texts on the event loop instead of the token worker (812 against 581 µs: the
11 MB rank table's cache misses on a loop that does everything else; checked again on 2026-11-27 with the faster
counter of [Token counting](#token-counting): 1.34× and 1.50× the worker's CPU per request in two runs), a 64 MB young generation
(\`--max-semi-space-size\`: within the noise), a hand-written check of the upstream answer instead of zod (within
the noise), node:http's client instead of undici's (undici's dispatch costs about 55 µs a call against node:http's
85–95 in a client alone).

`;
}

/** Where each row's CPU went, by thread (from /proc; empty where the run had none). */
function threadsTable(rows, table) {
  const measured = Object.entries(rows).filter(([, row]) => row.threadsUs);
  if (measured.length === 0) return "";
  return `
By thread (medians over the rounds, µs per request; ticks of 10 ms, so a few µs either way): the event loop, V8's
platform threads (the garbage collector's parallel scavenges and concurrent marking), the token counter's worker,
and the rest (libuv, the inspector, signals).

${table([
  ["", "event loop", "garbage collector threads", "token worker", "other"],
  ["---", "---", "---", "---", "---"],
  ...measured.map(([name, row]) => [LABELS[name] ?? name, ...THREADS.map((thread) => `${row.threadsUs[thread]} µs`)]),
])}
`;
}
