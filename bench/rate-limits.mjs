// The benchmark's rate-limit scenario: what RATE_LIMIT_* costs on the chat path against the instant
// upstream, with limits unset, counted in process, and counted in Redis (a real redis-server on a
// free loopback port; those rows are skipped, and said so, where there is none). The limits are set
// high enough never to refuse. With all three set every request pays the most the limits can cost:
// its request counted, the tokens read, a slot taken (one Redis round trip), the slot released and
// the tokens charged after; with RATE_LIMIT_RPM alone, one script in one round trip. One client key and workspace throughout (a single hot key).
// The adapters take turns in every round (config-cost.mjs).
import { configCost } from "./config-cost.mjs";
import { startRedis } from "./replicas.mjs";

const ROUNDS = Number(process.env.BENCH_LIMIT_ROUNDS ?? 5);
const LOAD_SECONDS = Number(process.env.BENCH_LIMIT_SECONDS ?? 4);
const LIMITS = { RATE_LIMIT_RPM: "1000000000", RATE_LIMIT_TPM: "1000000000000", RATE_LIMIT_CONCURRENT: "100000" };

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
  const rows = await configCost(adapters, { rounds: ROUNDS, seconds: LOAD_SECONDS, label: "limits", redisPid: (name) => (name.startsWith("redis") ? redis.child.pid : undefined) });
  for (const adapter of Object.values(adapters)) adapter.child.kill();
  upstream.child.kill();
  redis?.child.kill();
  return { rounds: ROUNDS, redis: redis !== null, ...rows };
}
