import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { Redis } from "ioredis";

/** A real redis-server on a free loopback port, without persistence, for the tests that share state. */
export interface RedisServer {
  url: string;
  client: Redis;
  stop(): Promise<void>;
}

/** A free loopback port. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/**
 * A Redis for a test: the one REDIS_URL names when set (stop() then only disconnects), else a
 * redis-server of its own (installed by .ci/run from Debian's packages; `apt-get install
 * redis-server` locally). Suites that use it are declared with `describeWith(REDIS, …)`.
 */
export async function startRedis(options: { port?: number } = {}): Promise<RedisServer> {
  const given = options.port === undefined ? process.env.REDIS_URL : undefined;
  if (given) {
    const client = new Redis(given, { maxRetriesPerRequest: 0 });
    client.on("error", () => undefined);
    await client.ping();
    return { url: given, client, stop: async () => client.disconnect() };
  }
  const port = options.port ?? (await freePort());
  const child: ChildProcess = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
    stdio: "ignore",
  });
  const spawned = new Promise<never>((_, reject) =>
    child.once("error", (error) =>
      reject(new Error(`redis-server could not be started (${error.message}); install it with: apt-get install redis-server`)),
    ),
  );
  const url = `redis://127.0.0.1:${port}`;
  const client = new Redis(url, { lazyConnect: true, retryStrategy: () => 50, maxRetriesPerRequest: 0 });
  client.on("error", () => undefined);
  const ready = (async () => {
    for (let attempt = 0; attempt < 100; attempt += 1) {
      try {
        await client.connect().catch(() => undefined);
        if ((await client.ping()) === "PONG") return;
      } catch {
        // not up yet
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error("redis-server did not answer within 5 s");
  })();
  await Promise.race([ready, spawned]);
  return {
    url,
    client,
    async stop() {
      client.disconnect();
      child.kill("SIGKILL");
    },
  };
}
