import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { Redis } from "ioredis";

/**
 * A real redis-server on a free loopback port, without persistence, for the tests that share state.
 * `DEBUG` is allowed from loopback (`DEBUG SLEEP` makes it slow on purpose).
 */
export interface RedisServer {
  url: string;
  port: number;
  client: Redis;
  stop(): Promise<void>;
  /** Sends the server a signal (SIGSTOP hangs it, SIGCONT resumes it); only for a server of its own. */
  signal(signal: NodeJS.Signals): void;
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
    const port = Number(new URL(given).port || 6379);
    const signal = () => {
      throw new Error("a Redis named by REDIS_URL cannot be signalled");
    };
    return { url: given, port, client, stop: async () => client.disconnect(), signal };
  }
  const port = options.port ?? (await freePort());
  const child: ChildProcess = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--enable-debug-command", "local"], {
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
    port,
    client,
    async stop() {
      client.disconnect();
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    },
    signal: (signal) => child.kill(signal),
  };
}
