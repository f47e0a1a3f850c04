import { createServer } from "node:net";
import { describe, expect, it, vi } from "vitest";
import { ReopeningRedis } from "../../../src/redis/reopening-redis.js";

/** A loopback port nothing listens on: a connection to it is refused at once. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Resolves at the client's next `end` (`events.once` would reject at its connection errors). */
const nextEnd = (client: ReopeningRedis) => new Promise<void>((resolve) => client.once("end", () => resolve()));

describe("ReopeningRedis", () => {
  it("opens a connection that ended on its own again, and not one the adapter closed", async () => {
    const timers: (() => void)[] = [];
    const clock = { setTimeout: (callback: () => void) => timers.push(callback) };
    // No reconnection of ioredis's own: a refused connection ends, as a Sentinel connection whose lookup was cut short does.
    const client = new ReopeningRedis({ host: "127.0.0.1", port: await closedPort(), lazyConnect: true, retryStrategy: () => null }, 100, clock);
    client.on("error", () => undefined);
    const connect = vi.spyOn(client, "connect");

    const ended = nextEnd(client);
    await client.connect().catch(() => undefined);
    await ended;
    expect(client.status).toBe("end");
    expect(timers).toHaveLength(1);
    const endedAgain = nextEnd(client);
    timers.shift()?.();
    expect(connect).toHaveBeenCalledTimes(2);
    await endedAgain;
    expect(timers).toHaveLength(1);

    // Closed by the adapter: its end is final.
    client.disconnect();
    timers.shift()?.();
    expect(connect).toHaveBeenCalledTimes(2);
    expect(timers).toHaveLength(0);
  });
});
