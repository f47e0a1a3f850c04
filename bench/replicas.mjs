// The benchmark's replica scenario: list calls per poll interval that the workspace service sees,
// against the number of adapter replicas (1, 2, 4), each replica polling alone and sharing through
// Redis (a real redis-server on a free loopback port; skipped, and said so, where there is none).
import { spawn, spawnSync } from "node:child_process";
import { createServer } from "node:net";
import { Agent, request } from "undici";
import { statsOf } from "./processes.mjs";

const INTERVAL_MS = 100;
const WAITING = 200;
const headers = { authorization: "Bearer bench-key", "service-workspace": "bench", "content-type": "application/json" };

/** A free TCP port on loopback (the other bench scenarios that start servers of their own take theirs here too). */
export function freePort() {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** A redis-server of the benchmark's own on a free loopback port, or null where there is none. */
export async function startRedis() {
  if (spawnSync("redis-server", ["--version"], { stdio: "ignore" }).status !== 0) return null;
  const port = await freePort();
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
  await new Promise((resolve) => setTimeout(resolve, 300));
  return { child, url: `redis://127.0.0.1:${port}` };
}

/** `start(file, env)` starts a bench process (run.mjs's), remembered for the final clean-up. */
export async function replicaPolling(start) {
  const redis = await startRedis();
  const workspace = await start("embedded-process.mjs", { STEP_DELAY_MS: "0" });
  const rows = [];
  for (const sharing of redis ? [false, true] : [false]) {
    for (const replicas of [1, 2, 4]) {
      const adapters = await Promise.all(
        Array.from({ length: replicas }, () =>
          start("adapter-process.mjs", {
            UPSTREAM_URL: workspace.url,
            DEFAULT_WORKSPACE: "bench",
            LOG_LEVEL: "warn",
            QUERY_TIMEOUT_MS: "600000",
            POLL_INTERVAL_MIN_MS: String(INTERVAL_MS),
            POLL_INTERVAL_MAX_MS: String(INTERVAL_MS),
            REALTIME: "off",
            ...(sharing ? { REDIS_URL: redis.url, REDIS_KEY_PREFIX: `bench-${replicas}:` } : { REDIS_URL: "" }),
          }),
        ),
      );
      const dispatcher = new Agent({ connections: 1000 });
      const open = Array.from({ length: WAITING }, (_, index) => {
        const controller = new AbortController();
        request(`${adapters[index % replicas].url}/v1/chat/completions`, {
          method: "POST",
          headers,
          body: JSON.stringify({ model: "ask", messages: [{ role: "user", content: `leave ${index} [fault:stall]` }] }),
          dispatcher,
          signal: controller.signal,
        }).catch(() => null);
        return controller;
      });
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const total = async () => (await Promise.all(adapters.map(({ child }) => statsOf(child)))).reduce((sum, stats) => sum + stats.listCalls, 0);
      const before = await total();
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const after = await total();
      rows.push({ replicas, sharing, listCallsPerInterval: Math.round(((after - before) / (3000 / INTERVAL_MS)) * 100) / 100, pagesPerPoll: Math.ceil(WAITING / 100) });
      for (const controller of open) controller.abort();
      await dispatcher.close();
      for (const { child } of adapters) child.kill();
    }
  }
  workspace.child.kill();
  redis?.child.kill();
  return { waiting: WAITING, intervalMs: INTERVAL_MS, redis: redis !== null, rows };
}
