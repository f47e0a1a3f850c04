// What tracing costs on the chat path (`node bench/tracing.mjs`, also part of `npm run bench`):
// the adapter with tracing off, with tracing on at sampling 1.0 (parent-based always-on, the
// default), at sampling 0.1 and at 0 (parent-based trace-id ratio: every trace dropped, what a
// request the sampler drops costs), exporting OTLP/HTTP protobuf to a sink in another process,
// side by side against the instant upstream at 50 connections; and a second untraced adapter, the
// same as the first, whose ratio to it is what the method can tell apart on this machine (two
// identical processes can differ by a few per cent: layout, JIT and GC timing). The machine is shared and noisy, so the targets take turns
// in alternating order round after round (off, on, then on, off, …), and what is compared is each
// round's pair: process CPU time per request (steadier than requests/s) and requests/s.
// BENCH_BASE=/path/to/an/older/checkout (built) adds that checkout's adapter, untraced as `before`,
// traced as `beforeOn` and sampled at 0.1 as `beforeOn10`, taking turns with the others, for the comparison of this code against
// it (BENCH_BASE_LABEL names it, e.g. its commit). Run alone, it prints its figures for comparing builds;
// docs/benchmarks.md shows the part as `npm run bench` runs it (`BENCH_ONLY=tracing BENCH_MERGE=1` measures it again). Knobs: BENCH_SECONDS (per run,
// default 4), BENCH_ROUNDS (default 6), BENCH_STREAMED=0 (plain answers only).
import { execFileSync } from "node:child_process";
import { cpus, loadavg } from "node:os";
import { pathToFileURL } from "node:url";
import { adapterEnvironment, loadAdapter, startProcess, steadyWindow } from "./processes.mjs";

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const round = (value, digits = 3) => Math.round(value * 10 ** digits) / 10 ** digits;

/** Runs the rounds; every process started is stopped at the end. */
export async function tracingCost({ seconds = 4, rounds = 6, stream = false, base } = {}) {
  const children = [];
  const start = async (file, env) => {
    const started = await startProcess(file, env);
    children.push(started.child);
    return started;
  };
  try {
    const upstream = await start("instant-upstream.mjs", {});
    const sink = await start("otlp-sink.mjs", {});
    const common = {
      ...adapterEnvironment(upstream.url),
      // Whatever the shell exports, only `on` traces.
      OTEL_EXPORTER_OTLP_ENDPOINT: "",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "",
    };
    const traced = { ...common, OTEL_EXPORTER_OTLP_ENDPOINT: sink.url };
    const tenth = { ...traced, OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.1" };
    const targets = {};
    if (base) {
      const baseAdapter = pathToFileURL(`${base}/bench/adapter-process.mjs`).href;
      targets.before = await start(baseAdapter, common);
      targets.beforeOn = await start(baseAdapter, traced);
      targets.beforeOn10 = await start(baseAdapter, tenth);
    }
    targets.off = await start("adapter-process.mjs", common);
    targets.offAgain = await start("adapter-process.mjs", common);
    targets.on = await start("adapter-process.mjs", traced);
    targets.on10 = await start("adapter-process.mjs", tenth);
    targets.on0 = await start("adapter-process.mjs", { ...tenth, OTEL_TRACES_SAMPLER_ARG: "0" });
    const names = Object.keys(targets);
    for (const name of names) await loadAdapter(targets[name].url, { seconds: 2, stream }); // warm-up, discarded
    const figures = Object.fromEntries(names.map((name) => [name, []]));
    for (let index = 0; index < rounds; index += 1) {
      for (const name of index % 2 === 0 ? names : [...names].reverse()) {
        // A window of steady load, as bench/cpu.mjs measures (steadyWindow, bench/processes.mjs).
        const load = (loadSeconds) => loadAdapter(targets[name].url, { seconds: loadSeconds, stream });
        const { before, after, requests, result: run, seconds: windowSeconds } = await steadyWindow(targets[name].child, load, seconds);
        if (run.errors || run.non2xx) throw new Error(`${name}: ${run.errors} errors, ${run.non2xx} non-2xx`);
        figures[name].push({ rps: requests / windowSeconds, cpuUs: (after.cpuMicros - before.cpuMicros) / requests, loopUs: ((after.loopActiveMs - before.loopActiveMs) * 1000) / requests });
      }
    }
    const sinkStats = await new Promise((resolve) => {
      const listener = (message) => {
        if (message.sink) {
          sink.child.off("message", listener);
          resolve(message.sink);
        }
      };
      sink.child.on("message", listener);
      sink.child.send("stats");
    });
    const summary = (name) => ({
      rps: round(median(figures[name].map((figure) => figure.rps)), 0),
      cpuUsPerRequest: round(median(figures[name].map((figure) => figure.cpuUs)), 1),
      loopUsPerRequest: round(median(figures[name].map((figure) => figure.loopUs)), 1),
      cpuUsPerRequestRuns: figures[name].map((figure) => round(figure.cpuUs, 1)),
    });
    /** Per round, `name`'s CPU per request over `reference`'s: the median, and the range. */
    const ratio = (name, reference) => {
      const ratios = figures[name].map((figure, index) => figure.cpuUs / figures[reference][index].cpuUs);
      return { median: round(median(ratios)), min: round(Math.min(...ratios)), max: round(Math.max(...ratios)) };
    };
    return {
      seconds,
      rounds,
      stream,
      targets: Object.fromEntries(names.map((name) => [name, summary(name)])),
      onOverOff: ratio("on", "off"),
      sampledOverOff: ratio("on10", "off"),
      unsampledOverOff: ratio("on0", "off"),
      offAgainOverOff: ratio("offAgain", "off"),
      addedCpuUsPerRequest: round(median(figures.on.map((figure, index) => figure.cpuUs - figures.off[index].cpuUs)), 1),
      ...(base
        ? {
          offOverBefore: ratio("off", "before"),
          beforeOnOverBefore: ratio("beforeOn", "before"),
          beforeOn10OverBefore: ratio("beforeOn10", "before"),
          onOverBeforeOn: ratio("on", "beforeOn"),
        }
        : {}),
      exported: sinkStats,
    };
  } finally {
    for (const child of children) child.kill();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const loadBefore = loadavg()[0];
  const options = { seconds: Number(process.env.BENCH_SECONDS ?? 4), rounds: Number(process.env.BENCH_ROUNDS ?? 6), base: process.env.BENCH_BASE };
  const plain = await tracingCost(options);
  const streamed = process.env.BENCH_STREAMED === "0" ? null : await tracingCost({ ...options, stream: true });
  const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
  const result = {
    date: new Date().toISOString(),
    commit,
    base: options.base ? (process.env.BENCH_BASE_LABEL ?? options.base) : null,
    machine: { cpus: cpus().length, node: process.version, loadAverage: [Math.round(loadBefore * 10) / 10, Math.round(loadavg()[0] * 10) / 10] },
    plain,
    streamed,
  };
  console.log(JSON.stringify(result, null, 2));
}
