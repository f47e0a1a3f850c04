// The benchmark's slow-Redis scenario (docs/architecture/redis.md#redis-down-or-slow): how long Redis takes
// to answer the adapter's commands on a two-core machine kept busy, and what each command bound
// (REDIS_COMMAND_TIMEOUT_MS) makes of that: conversations of several turns across two replicas, while
// CPU-bound processes hold every core. A lookup that outlives its bound is a refused turn (503); before
// the bound could be raised it was a silently forked conversation. Needs redis-server (skipped, and
// said so, where there is none).
import { spawn } from "node:child_process";
import { cpus } from "node:os";
import { startRedis } from "./replicas.mjs";

const CONVERSATIONS = 40;
// CPU-bound processes beside the replicas (BENCH_REDIS_BUSY): by default four per core.
const BUSY = Number(process.env.BENCH_REDIS_BUSY ?? 4 * cpus().length);
const TURNS = 8;
const headers = { authorization: "Bearer bench-key", "service-workspace": "bench", "content-type": "application/json" };

/** The adapter's Redis command histogram, read from /metrics: counts above each bound, and the slowest bucket. */
async function redisCommandTimes(url) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const buckets = [...text.matchAll(/^adapter_redis_command_duration_seconds_bucket\{le="([^"]+)",outcome="([^"]+)"\} (\d+)$/gm)].map(
    ([, le, outcome, count]) => ({ le: le === "+Inf" ? Infinity : Number(le), outcome, count: Number(count) }),
  );
  return buckets;
}

/** Runs the conversations against two replicas; `bound` is their REDIS_COMMAND_TIMEOUT_MS. */
async function conversationsWithBound(start, redis, workspace, bound) {
  const adapters = await Promise.all(
    [0, 1].map(() =>
      start("adapter-process.mjs", {
        UPSTREAM_URL: workspace.url,
        DEFAULT_WORKSPACE: "bench",
        LOG_LEVEL: "silent",
        REALTIME: "off",
        REDIS_URL: redis.url,
        REDIS_KEY_PREFIX: `bench-slow-${bound}:`,
        REDIS_COMMAND_TIMEOUT_MS: String(bound),
      }),
    ),
  );
  const busy = Array.from({ length: BUSY }, () => spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" }));
  let continued = 0;
  let refused = 0;
  let forked = 0;
  try {
    await Promise.all(
      Array.from({ length: CONVERSATIONS }, async (_, index) => {
        const messages = [{ role: "user", content: `How much annual leave do employees get? (${index})` }];
        let queryId = null;
        for (let turn = 0; turn < TURNS; turn += 1) {
          const response = await fetch(`${adapters[(index + turn) % 2].url}/v1/chat/completions`, {
            method: "POST",
            headers,
            body: JSON.stringify({ model: "ask", messages }),
          });
          const body = await response.json();
          if (response.status === 503) {
            refused += 1;
            turn -= 1; // a client sends it again
            await new Promise((resolve) => setTimeout(resolve, 200));
            continue;
          }
          const id = response.headers.get("service-query-id");
          if (turn > 0 && id === queryId) continued += 1;
          else if (turn > 0) forked += 1;
          queryId = id;
          messages.push({ role: "assistant", content: body.choices[0].message.content }, { role: "user", content: `And turn ${turn + 2}?` });
        }
      }),
    );
  } finally {
    for (const child of busy) child.kill("SIGKILL");
  }
  const buckets = (await Promise.all(adapters.map(({ url }) => redisCommandTimes(url)))).flat();
  for (const { child } of adapters) child.kill();
  const answered = buckets.filter((bucket) => bucket.outcome === "answered");
  const total = answered.filter((bucket) => bucket.le === Infinity).reduce((sum, bucket) => sum + bucket.count, 0);
  const within = (seconds) => answered.filter((bucket) => bucket.le === seconds).reduce((sum, bucket) => sum + bucket.count, 0);
  const over = Object.fromEntries([0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1].map((seconds) => [`${seconds * 1000}ms`, total - within(seconds)]));
  const failed = buckets.filter((bucket) => bucket.outcome === "failed" && bucket.le === Infinity).reduce((sum, bucket) => sum + bucket.count, 0);
  return { boundMs: bound, turns: CONVERSATIONS * TURNS, continued, forked, refused, commandsAnswered: total, commandsFailed: failed, answeredSlowerThan: over };
}

/** `start(file, env)` starts a bench process (run.mjs's), remembered for the final clean-up. */
export async function slowRedis(start) {
  const redis = await startRedis();
  if (!redis) return { skipped: "redis-server is not installed" };
  const workspace = await start("embedded-process.mjs", { STEP_DELAY_MS: "0" });
  try {
    const rows = [];
    for (const bound of [50, 1000]) rows.push(await conversationsWithBound(start, redis, workspace, bound));
    return { conversations: CONVERSATIONS, turnsEach: TURNS, busyProcesses: BUSY, rows };
  } finally {
    workspace.child.kill();
    redis.child.kill();
  }
}
