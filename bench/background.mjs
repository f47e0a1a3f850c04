// The benchmark's background-mode part (docs/responses-api.md#background-mode): the memory a
// thousand background answers in flight take (their queries stalled upstream, `[fault:stall]`), the
// Redis bytes each stored event takes (MEMORY USAGE of finished answers' event logs), and how soon a
// resumed stream (`GET /v1/responses/{id}?stream=true&starting_after=N`) delivers its first event, in
// process and through Redis. Everything on loopback.
import { loadavg } from "node:os";
import { Redis } from "ioredis";
import { Agent, request } from "undici";
import { statsOf } from "./processes.mjs";
import { startRedis } from "./replicas.mjs";

const IN_FLIGHT = Number(process.env.BENCH_BACKGROUND_IN_FLIGHT ?? 1000);
const RESUMES = Number(process.env.BENCH_BACKGROUND_RESUMES ?? 200);
const FINISHED = 50;
const headers = { authorization: "Bearer bench-key", "service-workspace": "bench", "content-type": "application/json" };

const round = (value, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;
const percentile = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))];
const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Creates a background response; its id. */
async function createBackground(url, input, dispatcher) {
  const response = await request(`${url}/v1/responses`, { method: "POST", headers, body: JSON.stringify({ model: "ask", input, background: true }), dispatcher });
  const body = await response.body.json();
  if (response.statusCode !== 200) throw new Error(`background create: ${response.statusCode} ${JSON.stringify(body)}`);
  return body.id;
}

/** Polls until the response has ended; its final object. */
async function finished(url, id) {
  for (;;) {
    const response = await request(`${url}/v1/responses/${id}`, { headers });
    const body = await response.body.json();
    if (body.status !== "in_progress") return body;
    await wait(20);
  }
}

/** Microseconds from sending a resume to its first event's bytes, one at a time; and how many events each log holds. */
async function resumeLatency(url, ids) {
  const dispatcher = new Agent({ connections: 1 });
  const times = [];
  for (let index = 0; index < RESUMES; index += 1) {
    const id = ids[index % ids.length];
    const started = process.hrtime.bigint();
    const response = await request(`${url}/v1/responses/${id}?stream=true&starting_after=2`, { headers, dispatcher });
    let first = 0n;
    for await (const chunk of response.body) {
      if (!first && String(chunk).includes("data:")) first = process.hrtime.bigint();
    }
    if (response.statusCode !== 200 || !first) throw new Error(`resume ${id}: ${response.statusCode}`);
    times.push(Number(first - started) / 1000);
  }
  await dispatcher.close();
  return { p50Us: Math.round(percentile(times, 50)), p99Us: Math.round(percentile(times, 99)) };
}

/** Memory of IN_FLIGHT background answers waiting on stalled queries, above the adapter's own after a warm-up. */
async function inFlightMemory(start, redisUrl) {
  const workspace = await start("embedded-process.mjs", { STEP_DELAY_MS: "0" });
  const adapter = await start("adapter-process.mjs", {
    UPSTREAM_URL: workspace.url,
    DEFAULT_WORKSPACE: "bench",
    LOG_LEVEL: "warn",
    QUERY_TIMEOUT_MS: "600000",
    MAX_CONCURRENT_REQUESTS: "100000",
    MAX_CONCURRENT_PER_WORKSPACE: "100000",
    POLL_INTERVAL_MIN_MS: "200",
    POLL_INTERVAL_MAX_MS: "1000",
    REALTIME: "off",
    ...(redisUrl ? { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: "bench-background-memory:", CLUSTER_POLLING: "off" } : { REDIS_URL: "" }),
  });
  const dispatcher = new Agent({ connections: 50 });
  await finished(adapter.url, await createBackground(adapter.url, "How much annual leave do employees get?", dispatcher));
  const baseline = await statsOf(adapter.child, "stats-after-gc");
  for (let index = 0; index < IN_FLIGHT; index += 50) {
    await Promise.all(Array.from({ length: Math.min(50, IN_FLIGHT - index) }, (_, offset) => createBackground(adapter.url, `leave ${index + offset} [fault:stall]`, dispatcher)));
  }
  let stats = await statsOf(adapter.child, "stats-after-gc");
  for (let tries = 0; stats.waitingQueries < IN_FLIGHT && tries < 100; tries += 1) {
    await wait(100);
    stats = await statsOf(adapter.child, "stats-after-gc");
  }
  await dispatcher.close();
  for (const { child } of [workspace, adapter]) child.kill();
  return {
    inFlight: stats.waitingQueries,
    heapKBPerAnswer: round((stats.heapUsedBytes - baseline.heapUsedBytes) / 1024 / IN_FLIGHT, 2),
    rssKBPerAnswer: round((stats.rssBytes - baseline.rssBytes) / 1024 / IN_FLIGHT, 2),
    rssMB: round(stats.rssBytes / 2 ** 20),
    baselineRssMB: round(baseline.rssBytes / 2 ** 20),
  };
}

/** Finished background answers: Redis bytes per stored event, and resume latency in process and through Redis. */
async function storedEvents(start, redisUrl) {
  const workspace = await start("embedded-process.mjs", { STEP_DELAY_MS: "0" });
  const environment = { UPSTREAM_URL: workspace.url, DEFAULT_WORKSPACE: "bench", LOG_LEVEL: "warn", REALTIME: "off" };
  const local = await start("adapter-process.mjs", { ...environment, REDIS_URL: "" });
  const shared = redisUrl ? await start("adapter-process.mjs", { ...environment, REDIS_URL: redisUrl, REDIS_KEY_PREFIX: "bench-background:" }) : null;
  const result = {};
  for (const [name, adapter] of [["memory", local], ["redis", shared]]) {
    if (!adapter) continue;
    const ids = [];
    for (let index = 0; index < FINISHED; index += 1) ids.push(await createBackground(adapter.url, "How much annual leave do employees get?"));
    for (const id of ids) await finished(adapter.url, id);
    result[name] = { resume: await resumeLatency(adapter.url, ids) };
    if (name === "redis") {
      const redis = new Redis(redisUrl);
      let bytes = 0;
      let events = 0;
      for (const id of ids) {
        const key = `bench-background:background:{${id}}:events`;
        bytes += Number(await redis.call("MEMORY", "USAGE", key));
        events += await redis.llen(key);
      }
      const record = Number(await redis.call("MEMORY", "USAGE", `bench-background:background:{${ids[0]}}:record`));
      redis.disconnect();
      result.redis.bytesPerEvent = Math.round(bytes / events);
      result.redis.eventsPerAnswer = round(events / ids.length);
      result.redis.recordBytes = record;
    }
  }
  for (const child of [workspace.child, local.child, shared?.child]) child?.kill();
  return result;
}

/** `start(file, env)` starts a bench process (run.mjs's), remembered for the final clean-up. */
export async function backgroundCost(start) {
  const redis = await startRedis();
  const loadBefore = round(loadavg()[0], 2);
  try {
    const memory = await inFlightMemory(start, null);
    const events = await storedEvents(start, redis?.url ?? null);
    return { date: new Date().toISOString(), loadAverage: [loadBefore, round(loadavg()[0], 2)], inFlight: memory, events, redis: Boolean(redis) };
  } finally {
    redis?.child.kill();
  }
}
