// `node bench/quick.mjs`: adapter requests/s at 50 connections against the instant upstream, for
// trying optimisations quickly (the full comparison is `npm run bench`). It also prints the
// adapter's CPU time per request (event loop, and the whole process with the token worker), which
// is steadier than requests/s on a shared machine. ADAPTER_NODE_OPTIONS passes Node flags to the
// adapter's process only (for trying V8 settings).
import { loadAdapter, startProcess, statsOf } from "./processes.mjs";

const start = startProcess;
const upstream = await start("instant-upstream.mjs", {});
const adapter = await start("adapter-process.mjs", {
  UPSTREAM_URL: upstream.url,
  DEFAULT_WORKSPACE: "bench",
  LOG_LEVEL: process.env.LOG_LEVEL ?? "info",
  LOG_FORMAT: "json",
  MAX_CONCURRENT_PER_WORKSPACE: "100000",
}, (process.env.ADAPTER_NODE_OPTIONS ?? "").split(" ").filter(Boolean));
const run = () => loadAdapter(adapter.url, { seconds: Number(process.env.BENCH_SECONDS ?? 4), stream: process.env.STREAM === "1" });
await run();
const results = [];
const before = await statsOf(adapter.child);
for (let index = 0; index < 3; index += 1) results.push(Math.round((await run()).requests.average));
const after = await statsOf(adapter.child);
const requests = after.requests - before.requests;
const perRequest = (value) => Math.round(value / requests);
console.log(
  `adapter: ${results.join(", ")} requests/s; per request: event loop ${perRequest((after.loopActiveMs - before.loopActiveMs) * 1000)} µs, ` +
    `process CPU ${perRequest(after.cpuMicros - before.cpuMicros)} µs`,
);
adapter.child.kill();
upstream.child.kill();
