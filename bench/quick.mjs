// `node bench/quick.mjs`: adapter requests/s at 50 connections against the instant upstream, for
// trying optimisations quickly (the full comparison is `npm run bench`).
import autocannon from "autocannon";
import { startProcess } from "./processes.mjs";

const start = startProcess;
const upstream = await start("instant-upstream.mjs", {});
const adapter = await start("adapter-process.mjs", {
  UPSTREAM_URL: upstream.url,
  DEFAULT_WORKSPACE: "bench",
  LOG_LEVEL: process.env.LOG_LEVEL ?? "info",
  LOG_FORMAT: "json",
  MAX_CONCURRENT_PER_WORKSPACE: "100000",
});
const body = JSON.stringify({ model: "ask", stream: process.env.STREAM === "1", messages: [{ role: "user", content: "How much annual leave do employees get?" }] });
const run = () =>
  autocannon({
    url: `${adapter.url}/v1/chat/completions`,
    method: "POST",
    headers: { authorization: "Bearer k", "content-type": "application/json" },
    body,
    connections: 50,
    duration: Number(process.env.BENCH_SECONDS ?? 4),
  });
await run();
const results = [];
for (let index = 0; index < 3; index += 1) results.push(Math.round((await run()).requests.average));
console.log(`adapter: ${results.join(", ")} requests/s`);
adapter.child.kill();
upstream.child.kill();
