// The benchmark's governance scenario (docs/governance.md): what usage counting and the audit trail
// cost on the chat path against the instant upstream. Off (the default), usage counted in process,
// usage counted and every answer audited to a file, and both with usage in Redis (a real redis-server
// on a free loopback port; skipped, and said so, where there is none). With BENCH_BASELINE naming a
// build of the commit before governance (a folder with its own dist/ and bench/), that build runs
// first, as the reference: then "off" against it is what governance costs when it is off.
// The adapters take turns in every round (config-cost.mjs).
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { configCost } from "./config-cost.mjs";
import { startRedis } from "./replicas.mjs";

const ROUNDS = Number(process.env.BENCH_GOVERNANCE_ROUNDS ?? 5);
const LOAD_SECONDS = Number(process.env.BENCH_GOVERNANCE_SECONDS ?? 4);

/** `start(file, env)` starts a bench process (run.mjs's), remembered for the final clean-up. */
export async function governanceCost(start) {
  const redis = await startRedis();
  const upstream = await start("instant-upstream.mjs");
  const folder = mkdtempSync(join(tmpdir(), "bench-audit-"));
  const common = { UPSTREAM_URL: upstream.url, DEFAULT_WORKSPACE: "bench", LOG_LEVEL: "info", LOG_FORMAT: "json", MAX_CONCURRENT_REQUESTS: "100000", MAX_CONCURRENT_PER_WORKSPACE: "100000", REDIS_URL: "" };
  const baseline = process.env.BENCH_BASELINE;
  const adapters = {};
  if (baseline) adapters.baseline = await start(pathToFileURL(join(baseline, "bench/adapter-process.mjs")).href, common);
  adapters.off = await start("adapter-process.mjs", common);
  adapters.usage = await start("adapter-process.mjs", { ...common, USAGE_COUNTING: "on" });
  adapters.usageAndAudit = await start("adapter-process.mjs", { ...common, USAGE_COUNTING: "on", AUDIT_LOG: join(folder, "audit.jsonl") });
  if (redis) {
    adapters.redisUsageAndAudit = await start("adapter-process.mjs", { ...common, USAGE_COUNTING: "on", AUDIT_LOG: join(folder, "audit-redis.jsonl"), REDIS_URL: redis.url, REDIS_KEY_PREFIX: "bench-governance:" });
  }
  const rows = await configCost(adapters, { rounds: ROUNDS, seconds: LOAD_SECONDS, label: "governance", redisPid: (name) => (name.startsWith("redis") ? redis.child.pid : undefined) });
  for (const adapter of Object.values(adapters)) adapter.child.kill();
  upstream.child.kill();
  redis?.child.kill();
  return { rounds: ROUNDS, redis: redis !== null, baseline: baseline !== undefined, ...rows };
}
