// The benchmark's quota scenario (docs/rate-limits.md#reservations): what a token quota costs on the
// chat path against the instant upstream now that admission reserves each answer's expected tokens
// and its end settles them. Quotas unset (the reference), a daily quota counted in process, the same
// in Redis, and the daily and monthly quotas with the tokens per minute in Redis (a real
// redis-server on a free loopback port; those rows are skipped, and said so, where there is none).
// The quotas are set high enough never to refuse; one client key and workspace (a single hot key).
// With BENCH_BASELINE naming a build of the commit before reservations (a folder with its own dist/
// and bench/), its daily quota in process and in Redis run too: the count read at admission and
// charged at the end, for the before and after. The adapters take turns in every round (config-cost.mjs).
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { configCost } from "./config-cost.mjs";
import { startRedis } from "./replicas.mjs";

const ROUNDS = Number(process.env.BENCH_QUOTA_ROUNDS ?? 5);
const LOAD_SECONDS = Number(process.env.BENCH_QUOTA_SECONDS ?? 4);
const DAY = { RATE_LIMIT_TPD: "1000000000000000" };
const ALL = { ...DAY, RATE_LIMIT_TPMO: "1000000000000000", RATE_LIMIT_TPM: "1000000000000000" };

/** `start(file, env)` starts a bench process (run.mjs's), remembered for the final clean-up. */
export async function quotaCost(start) {
  const redis = await startRedis();
  const upstream = await start("instant-upstream.mjs");
  const common = { UPSTREAM_URL: upstream.url, DEFAULT_WORKSPACE: "bench", LOG_LEVEL: "info", LOG_FORMAT: "json", MAX_CONCURRENT_REQUESTS: "100000", MAX_CONCURRENT_PER_WORKSPACE: "100000", REDIS_URL: "" };
  const baseline = process.env.BENCH_BASELINE;
  const before = baseline && pathToFileURL(join(baseline, "bench/adapter-process.mjs")).href;
  const inRedis = (prefix) => (redis ? { REDIS_URL: redis.url, REDIS_KEY_PREFIX: prefix } : undefined);
  const adapters = { unset: await start("adapter-process.mjs", common) };
  if (before) adapters.beforeInProcess = await start(before, { ...common, ...DAY });
  adapters.inProcess = await start("adapter-process.mjs", { ...common, ...DAY });
  if (redis) {
    if (before) adapters.redisBefore = await start(before, { ...common, ...DAY, ...inRedis("bench-quota-before:") });
    adapters.redisDay = await start("adapter-process.mjs", { ...common, ...DAY, ...inRedis("bench-quota-day:") });
    adapters.redisAll = await start("adapter-process.mjs", { ...common, ...ALL, ...inRedis("bench-quota-all:") });
  }
  const rows = await configCost(adapters, { rounds: ROUNDS, seconds: LOAD_SECONDS, label: "quotas", redisPid: (name) => (name.startsWith("redis") ? redis.child.pid : undefined) });
  for (const adapter of Object.values(adapters)) adapter.child.kill();
  upstream.child.kill();
  redis?.child.kill();
  return { rounds: ROUNDS, redis: redis !== null, baseline: baseline !== undefined, ...rows };
}
