// `node bench/quick.mjs`: adapter requests/s at 50 connections against the instant upstream, for
// trying optimisations quickly (the full comparison is `npm run bench`).
import { loadAdapter, startProcess } from "./processes.mjs";

const start = startProcess;
const upstream = await start("instant-upstream.mjs", {});
const adapter = await start("adapter-process.mjs", {
  UPSTREAM_URL: upstream.url,
  DEFAULT_WORKSPACE: "bench",
  LOG_LEVEL: process.env.LOG_LEVEL ?? "info",
  LOG_FORMAT: "json",
  MAX_CONCURRENT_PER_WORKSPACE: "100000",
});
const run = () => loadAdapter(adapter.url, { seconds: Number(process.env.BENCH_SECONDS ?? 4), stream: process.env.STREAM === "1" });
await run();
const results = [];
for (let index = 0; index < 3; index += 1) results.push(Math.round((await run()).requests.average));
console.log(`adapter: ${results.join(", ")} requests/s`);
adapter.child.kill();
upstream.child.kill();
