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

/** Listens on a loopback port for a moment (0: one the system picks): the port listened on, or the error when it could not. */
function listenBriefly(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/** A free loopback port. */
export function freePort(): Promise<number> {
  return listenBriefly(0);
}

/** Whether a loopback port can be listened on now. */
export function canListen(port: number): Promise<boolean> {
  return listenBriefly(port).then(
    () => true,
    () => false,
  );
}

/**
 * A Redis for a test: the one REDIS_URL names when set (stop() then only disconnects), else a
 * redis-server of its own (installed by .ci/run from Debian's packages; `apt-get install
 * redis-server` locally). Suites that use it are declared with `describeWith(REDIS, …)`.
 */
export async function startRedis(options: { port?: number; own?: boolean } = {}): Promise<RedisServer> {
  // A test that stops, hangs or slows its Redis (`own`, or a port of its own) always starts one.
  const given = options.port === undefined && !options.own ? process.env.REDIS_URL : undefined;
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
  // A free port can be taken by another test's server between the check and the start: then this
  // server exits, and it starts again on another port (a port asked for is tried once).
  for (let attempt = 1; ; attempt += 1) {
    const port = options.port ?? (await freePort());
    const started = await startOn(port).catch((error: unknown) => {
      if (options.port !== undefined || attempt >= 5 || !(error instanceof PortTakenError)) throw error;
      return null;
    });
    if (started) return started;
  }
}

/** The port was in use: the server exited at once. */
class PortTakenError extends Error {}

/** A redis-server of its own on `port`, once it answers as itself (its process id), not another server on that port. */
async function startOn(port: number): Promise<RedisServer> {
  const child: ChildProcess = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--enable-debug-command", "local"], {
    stdio: "ignore",
  });
  const failed = new Promise<never>((_, reject) => {
    child.once("error", (error) =>
      reject(new Error(`redis-server could not be started (${error.message}); install it with: apt-get install redis-server`)),
    );
    child.once("exit", () => reject(new PortTakenError(`redis-server exited at start on port ${port}`)));
  });
  // It exits later too (stopped): that rejection has no one waiting for it.
  failed.catch(() => undefined);
  const url = `redis://127.0.0.1:${port}`;
  const client = new Redis(url, { lazyConnect: true, retryStrategy: () => 50, maxRetriesPerRequest: 0 });
  client.on("error", () => undefined);
  const ready = (async () => {
    for (let attempt = 0; attempt < 100; attempt += 1) {
      try {
        await client.connect().catch(() => undefined);
        if ((await client.info("server")).includes(`process_id:${child.pid}\r`)) return;
      } catch {
        // not up yet
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error("redis-server did not answer within 5 s");
  })();
  try {
    await Promise.race([ready, failed]);
  } catch (error) {
    client.disconnect();
    child.kill("SIGKILL");
    throw error;
  }
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
