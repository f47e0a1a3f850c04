// `npm run bench:profile`: the adapter under 50 connections for 10 s with --cpu-prof, then the
// functions that took most of its CPU time (self time), from the profile in bench/results/.
// Knobs: BENCH_SECONDS, STREAM=1 (streamed answers), TRACED=1 (tracing on at sampling 1.0,
// exporting OTLP/HTTP protobuf to the sink bench/tracing.mjs uses), TOP (functions listed).
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { loadAdapter, startProcess } from "./processes.mjs";

const here = new URL(".", import.meta.url);
const profiles = new URL("results/profiles/", here);
mkdirSync(profiles, { recursive: true });
const start = startProcess;
const upstream = await start("instant-upstream.mjs", {});
const sink = process.env.TRACED === "1" ? await start("otlp-sink.mjs", {}) : undefined;
// Whatever the shell exports, only TRACED=1 traces.
const tracing = { OTEL_EXPORTER_OTLP_ENDPOINT: sink?.url ?? "", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "" };
const adapter = await start(
  "adapter-process.mjs",
  { UPSTREAM_URL: upstream.url, DEFAULT_WORKSPACE: "bench", LOG_LEVEL: "info", LOG_FORMAT: "json", MAX_CONCURRENT_PER_WORKSPACE: "100000", ...tracing },
  ["--cpu-prof", `--cpu-prof-dir=${profiles.pathname}`],
);
const result = await loadAdapter(adapter.url, { seconds: Number(process.env.BENCH_SECONDS ?? 10), stream: process.env.STREAM === "1" });
console.log(`${Math.round(result.requests.average)} requests/s`);
await new Promise((resolve) => {
  adapter.child.once("exit", resolve);
  adapter.child.send("exit");
});
upstream.child.kill();
sink?.child.kill();
// One profile per thread: CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile; thread 0 is the event loop.
const ours = readdirSync(profiles).filter((name) => name.endsWith(".cpuprofile") && name.split(".")[3] === String(adapter.child.pid));
for (const name of ours.sort((a, b) => Number(a.split(".")[4]) - Number(b.split(".")[4]))) {
  const profile = JSON.parse(readFileSync(new URL(name, profiles), "utf8"));
  const selfTime = new Map();
  const byFile = new Map();
  const total = profile.samples.length;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  for (const id of profile.samples) {
    const frame = byId.get(id).callFrame;
    const file = frame.url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*\/(dist|bench)\//, "$1/");
    const key = `${frame.functionName || "(anonymous)"} ${file}:${frame.lineNumber}`;
    selfTime.set(key, (selfTime.get(key) ?? 0) + 1);
    const module = file.startsWith("node:") ? file : file.split("/").slice(0, 3).join("/") || frame.functionName;
    byFile.set(module, (byFile.get(module) ?? 0) + 1);
  }
  const top = (map, count) =>
    [...map].sort((a, b) => b[1] - a[1]).slice(0, count).map(([key, samples]) => `${((samples / total) * 100).toFixed(1).padStart(5)}%  ${key}`);
  console.log(`\n# ${name.split(".")[4] === "0" ? "event loop" : "worker thread"} (${name})\n## by function`);
  console.log(top(selfTime, Number(process.env.TOP ?? 30)).join("\n"));
  console.log("## by file");
  console.log(top(byFile, 25).join("\n"));
}
