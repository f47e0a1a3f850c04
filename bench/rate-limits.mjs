// The benchmark's rate-limit scenario: what RATE_LIMIT_* costs on the chat path against the instant
// upstream, with limits unset, counted in process, and counted in Redis (a real redis-server on a
// free loopback port; those rows are skipped, and said so, where there is none). The limits are set
// high enough never to refuse. With all three set every request pays the most the limits can cost:
// its request counted, the tokens read, a slot taken (one Redis round trip), the slot released and
// the tokens charged after; with RATE_LIMIT_RPM alone, one script in one round trip. One client key and workspace throughout (a single hot key). The machine is shared
// and noisy, so the adapters take turns in every round, and the costs are the medians of the
// per-round differences from the unset adapter.
import { readFileSync } from "node:fs";
import autocannon from "autocannon";
import { sequentialLatencies, statsOf } from "./processes.mjs";
import { startRedis } from "./replicas.mjs";

const ROUNDS = Number(process.env.BENCH_LIMIT_ROUNDS ?? 5);
const SEQUENTIAL = 500;
const LOAD_SECONDS = Number(process.env.BENCH_LIMIT_SECONDS ?? 4);
const headers = { authorization: "Bearer bench-key", "service-workspace": "bench", "content-type": "application/json" };
const body = JSON.stringify({ model: "ask", messages: [{ role: "user", content: "How much annual leave do employees get?" }] });
const LIMITS = { RATE_LIMIT_RPM: "1000000000", RATE_LIMIT_TPM: "1000000000000", RATE_LIMIT_CONCURRENT: "100000" };

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const round = (value) => Math.round(value);

/** CPU time (user + system) of a process, in microseconds, from /proc (Linux). */
function cpuMicros(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
}

/** p50 latency of one request at a time, in microseconds. */
async function sequentialP50(url) {
  return median(await sequentialLatencies(`${url}/v1/chat/completions`, { headers, body, count: SEQUENTIAL }));
}

/** 50 connections for LOAD_SECONDS: requests/s, the adapter's CPU per request, and Redis's. */
async function loaded(adapter, redisPid) {
  const before = await statsOf(adapter.child);
  const redisBefore = redisPid ? cpuMicros(redisPid) : 0;
  const result = await autocannon({ url: `${adapter.url}/v1/chat/completions`, method: "POST", headers, body, connections: 50, duration: LOAD_SECONDS });
  if (result.errors || result.non2xx) throw new Error(`${adapter.url}: ${result.errors} errors, ${result.non2xx} non-2xx`);
  const after = await statsOf(adapter.child);
  const requests = after.requests - before.requests;
  return {
    rps: result.requests.average,
    cpuUs: (after.cpuMicros - before.cpuMicros) / requests,
    redisCpuUs: redisPid ? (cpuMicros(redisPid) - redisBefore) / requests : 0,
  };
}

/** `start(file, env)` starts a bench process (run.mjs's), remembered for the final clean-up. */
export async function rateLimitCost(start) {
  const redis = await startRedis();
  const upstream = await start("instant-upstream.mjs");
  const common = { UPSTREAM_URL: upstream.url, DEFAULT_WORKSPACE: "bench", LOG_LEVEL: "info", LOG_FORMAT: "json", MAX_CONCURRENT_REQUESTS: "100000", MAX_CONCURRENT_PER_WORKSPACE: "100000", REDIS_URL: "" };
  const adapters = { unset: await start("adapter-process.mjs", common), inProcess: await start("adapter-process.mjs", { ...common, ...LIMITS }) };
  if (redis) {
    adapters.redisRpm = await start("adapter-process.mjs", { ...common, RATE_LIMIT_RPM: LIMITS.RATE_LIMIT_RPM, REDIS_URL: redis.url, REDIS_KEY_PREFIX: "bench-rpm:" });
    adapters.redis = await start("adapter-process.mjs", { ...common, ...LIMITS, REDIS_URL: redis.url, REDIS_KEY_PREFIX: "bench-limits:" });
  }
  const names = Object.keys(adapters);
  for (const name of names) await autocannon({ url: `${adapters[name].url}/v1/chat/completions`, method: "POST", headers, body, connections: 50, duration: 2 }); // warm-up
  const rounds = [];
  for (let index = 0; index < ROUNDS; index += 1) {
    const figures = {};
    // Alternate the order too, so that neither adapter always runs first in a round.
    for (const name of index % 2 ? [...names].reverse() : names) {
      figures[name] = { p50Us: await sequentialP50(adapters[name].url), ...(await loaded(adapters[name], name.startsWith("redis") ? redis.child.pid : undefined)) };
    }
    rounds.push(figures);
    console.log(`limits round ${index + 1}: ${JSON.stringify(figures)}`);
  }
  for (const name of names) adapters[name].child.kill();
  upstream.child.kill();
  redis?.child.kill();
  const row = (name) => ({
    p50Us: round(median(rounds.map((figures) => figures[name].p50Us))),
    rps: round(median(rounds.map((figures) => figures[name].rps))),
    cpuUs: round(median(rounds.map((figures) => figures[name].cpuUs))),
    ...(name.startsWith("redis") ? { redisCpuUs: round(median(rounds.map((figures) => figures[name].redisCpuUs))) } : {}),
    addedP50Us: round(median(rounds.map((figures) => figures[name].p50Us - figures.unset.p50Us))),
    addedCpuUs: round(median(rounds.map((figures) => figures[name].cpuUs - figures.unset.cpuUs))),
    rpsShareOfUnset: Math.round(median(rounds.map((figures) => figures[name].rps / figures.unset.rps)) * 1000) / 1000,
  });
  return { rounds: ROUNDS, redis: redis !== null, ...Object.fromEntries(names.map((name) => [name, row(name)])) };
}
