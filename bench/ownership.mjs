// The benchmark's ownership scenario (docs/governance.md#whose-query-it-is): what knowing whose each
// query is costs on the chat path against the instant upstream. One listed client key, its own key
// going upstream (pass-through: nothing recorded, the reference), against the same key behind the
// deployment's WORKSPACE_API_KEY (shared: each new query's owner recorded), each asked a new question
// and a follow-up by `query_id` (shared: the owner looked up, then recorded again); in process, and
// with Redis (a real redis-server on a free loopback port; skipped, and said so, where there is none).
// With BENCH_BASELINE naming a build of the commit before it (a folder with its own dist/ and bench/),
// that build runs first, as the reference: then pass-through against it is what the check costs when
// off. The adapters take turns in every round (config-cost.mjs).
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { configCost } from "./config-cost.mjs";
import { startRedis } from "./replicas.mjs";

const ROUNDS = Number(process.env.BENCH_OWNERSHIP_ROUNDS ?? 4);
const LOAD_SECONDS = Number(process.env.BENCH_OWNERSHIP_SECONDS ?? 4);
const headers = { authorization: "Bearer bench-key", "service-workspace": "bench", "content-type": "application/json" };
const question = { model: "ask", messages: [{ role: "user", content: "How much annual leave do employees get?" }] };

/** The body of a follow-up by `query_id` of a query the bench key started on `adapter` (so that it is its own). */
async function followUp(adapter) {
  const response = await fetch(`${adapter.url}/v1/chat/completions`, { method: "POST", headers, body: JSON.stringify(question) });
  await response.text();
  const queryId = response.headers.get("service-query-id");
  if (response.status !== 200 || !queryId) throw new Error(`${adapter.url}: no query to follow up (${response.status})`);
  return JSON.stringify({ ...question, query_id: queryId });
}

/** `start(file, env)` starts a bench process (run.mjs's), remembered for the final clean-up. */
export async function ownershipCost(start) {
  const redis = await startRedis();
  const upstream = await start("instant-upstream.mjs");
  const common = {
    UPSTREAM_URL: upstream.url,
    DEFAULT_WORKSPACE: "bench",
    ADAPTER_API_KEYS: "bench-key",
    LOG_LEVEL: "info",
    LOG_FORMAT: "json",
    MAX_CONCURRENT_REQUESTS: "100000",
    MAX_CONCURRENT_PER_WORKSPACE: "100000",
    REDIS_URL: "",
  };
  const shared = { WORKSPACE_API_KEY: "bench-key" };
  /** Pass-through and shared, each asked a new question and a follow-up, under `env`; named `passThrough`… or `redisPassThrough`…. */
  const set = async (prefix, env) => {
    const named = (name) => (prefix ? `${prefix}${name[0].toUpperCase()}${name.slice(1)}` : name);
    const adapters = {
      [named("passThrough")]: await start("adapter-process.mjs", env),
      [named("passThroughQueryId")]: await start("adapter-process.mjs", env),
      [named("shared")]: await start("adapter-process.mjs", { ...env, ...shared }),
      [named("sharedQueryId")]: await start("adapter-process.mjs", { ...env, ...shared }),
    };
    for (const name of Object.keys(adapters).filter((each) => each.endsWith("QueryId"))) adapters[name].body = await followUp(adapters[name]);
    return adapters;
  };
  const baseline = process.env.BENCH_BASELINE;
  const memory = {
    ...(baseline ? { baseline: await start(pathToFileURL(join(baseline, "bench/adapter-process.mjs")).href, common) } : {}),
    ...(await set("", common)),
  };
  const rows = await configCost(memory, { rounds: ROUNDS, seconds: LOAD_SECONDS, label: "ownership" });
  for (const adapter of Object.values(memory)) adapter.child.kill();
  let redisRows = {};
  if (redis) {
    const inRedis = await set("redis", { ...common, REDIS_URL: redis.url, REDIS_KEY_PREFIX: "bench-ownership:" });
    redisRows = await configCost(inRedis, { rounds: ROUNDS, seconds: LOAD_SECONDS, label: "ownership (Redis)", redisPid: () => redis.child.pid });
    for (const adapter of Object.values(inRedis)) adapter.child.kill();
  }
  upstream.child.kill();
  redis?.child.kill();
  return { rounds: ROUNDS, redis: redis !== null, baseline: baseline !== undefined, ...rows, ...redisRows };
}
