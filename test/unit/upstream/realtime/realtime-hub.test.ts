import { createServer } from "node:net";
import { Writable } from "node:stream";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { RealtimeChannel } from "../../../../src/core/realtime-channel.js";
import { hostPolicy } from "../../../../src/upstream/realtime/allowed-hosts.js";
import { type ChannelListener, type FallbackReason, RealtimeHub } from "../../../../src/upstream/realtime/realtime-hub.js";
import { CentrifugoTestServer, type TestServerOptions } from "../../../helpers/centrifugo-test-server.js";
import { waitFor } from "../../../helpers/wait-for.js";

const CONNECTION_TOKEN = "conn-token-5d1e";
const SUBSCRIPTION_TOKEN = "sub-token-8a2c";

/** A listener that records what it hears, and can wait for something to be heard. */
function recorder() {
  const events: string[] = [];
  const data: unknown[] = [];
  const failures: FallbackReason[] = [];
  let waiters: (() => void)[] = [];
  const heard = () => {
    for (const waiter of waiters) waiter();
    waiters = [];
  };
  const listener: ChannelListener = {
    publication: (value, offset) => {
      data.push(value);
      events.push(`publication ${offset}`);
      heard();
    },
    subscribed: () => {
      events.push("subscribed");
      heard();
    },
    interrupted: () => {
      events.push("interrupted");
      heard();
    },
    failed: (reason) => {
      failures.push(reason);
      events.push(`failed ${reason}`);
      heard();
    },
  };
  const until = async (predicate: () => boolean, timeoutMs = 5000) => {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out; heard: ${events.join(", ")}`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  };
  return { listener, events, data, failures, until };
}

const logs: string[] = [];
const logger = pino(
  { level: "trace" },
  new Writable({
    write(chunk, _encoding, done) {
      logs.push(String(chunk));
      done();
    },
  }),
);
const fallbacks: FallbackReason[] = [];

function hub(allowed: string[] = [], extra: { maxServerPingDelayMs?: number } = {}) {
  return new RealtimeHub({
    ...extra,
    policy: hostPolicy("http://127.0.0.1:1", allowed),
    logger,
    onFallback: (reason) => fallbacks.push(reason),
    minReconnectDelayMs: 20,
    maxReconnectDelayMs: 100,
    timeoutMs: 2000,
  });
}

function channelOn(server: CentrifugoTestServer | string, name: string, overrides: Partial<RealtimeChannel> = {}): RealtimeChannel {
  return {
    wsUrl: typeof server === "string" ? server : server.url,
    token: CONNECTION_TOKEN,
    channel: name,
    subscriptionToken: SUBSCRIPTION_TOKEN,
    since: { offset: typeof server === "string" ? 0 : server.top(name), epoch: typeof server === "string" ? "" : server.epoch },
    ...overrides,
  };
}

let servers: CentrifugoTestServer[] = [];
async function start(options: TestServerOptions = {}) {
  const server = await CentrifugoTestServer.start({
    connectionTokens: [CONNECTION_TOKEN, "other-conn-token"],
    subscriptionTokens: { "queries:a": SUBSCRIPTION_TOKEN, "queries:b": SUBSCRIPTION_TOKEN },
    ...options,
  });
  servers.push(server);
  return server;
}

async function settle(condition: () => boolean, timeoutMs = 3000) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not reached");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
  fallbacks.length = 0;
});

describe("RealtimeHub", () => {
  it("subscribes from the query's position: what was published since arrives first, then live publications", async () => {
    const server = await start();
    server.publish("queries:a", { delta: "old" });
    const channel = channelOn(server, "queries:a");
    server.publish("queries:a", { delta: "Hello" });
    server.publish("queries:a", { delta: " world" });
    const realtime = hub();
    const heard = recorder();
    const subscription = realtime.subscribe(channel, heard.listener);
    await heard.until(() => heard.data.length === 2);
    server.publish("queries:a", { status: "PROCESSED" });
    await heard.until(() => heard.data.length === 3);
    expect(heard.events).toEqual(["subscribed", "publication 2", "publication 3", "publication 4"]);
    expect(heard.data).toEqual([{ delta: "Hello" }, { delta: " world" }, { status: "PROCESSED" }]);
    subscription?.close();
    await settle(() => server.openConnections === 0);
    expect(realtime.openConnections).toBe(0);
    expect(realtime.activeSubscriptions).toBe(0);
  });

  it("shares one connection per endpoint and token, and disconnects when its last subscription closes", async () => {
    const server = await start();
    const realtime = hub();
    const first = recorder();
    const second = recorder();
    const third = recorder();
    const a = realtime.subscribe(channelOn(server, "queries:a"), first.listener);
    const b = realtime.subscribe(channelOn(server, "queries:b"), second.listener);
    const other = realtime.subscribe(channelOn(server, "queries:a", { token: "other-conn-token" }), third.listener);
    await Promise.all([first, second, third].map((heard) => heard.until(() => heard.events.includes("subscribed"))));
    expect(realtime.openConnections).toBe(2);
    expect(server.openConnections).toBe(2);
    expect(server.subscriptions).toBe(3);
    a?.close();
    await settle(() => server.subscriptions === 2);
    expect(server.openConnections).toBe(2);
    b?.close();
    other?.close();
    await settle(() => server.openConnections === 0);
    expect(realtime.openConnections).toBe(0);
  });

  it("gives a second subscription to the same channel and connection up at once (the first one keeps it)", async () => {
    const server = await start();
    const realtime = hub();
    const first = recorder();
    const a = realtime.subscribe(channelOn(server, "queries:a"), first.listener);
    expect(realtime.subscribe(channelOn(server, "queries:a"), recorder().listener)).toBeNull();
    expect(fallbacks).toEqual(["channel_busy"]);
    await first.until(() => first.events.includes("subscribed"));
    a?.close();
    await settle(() => server.openConnections === 0);
  });

  it("falls back when the endpoint refuses the connection", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const realtime = hub();
    const heard = recorder();
    realtime.subscribe(channelOn(`ws://127.0.0.1:${port}/connection/websocket`, "queries:a"), heard.listener);
    await heard.until(() => heard.failures.length > 0);
    expect(heard.failures).toEqual(["connect_failed"]);
    expect(realtime.openConnections).toBe(0);
    expect(realtime.activeSubscriptions).toBe(0);
  });

  it("falls back when the connection token is refused (close 3500) or expired (error 109)", async () => {
    const server = await start();
    const realtime = hub();
    const refused = recorder();
    realtime.subscribe(channelOn(server, "queries:a", { token: "forged" }), refused.listener);
    await refused.until(() => refused.failures.length > 0);
    expect(refused.failures).toEqual(["token_refused"]);

    server.connectError = { code: 109, message: "token expired" };
    const expired = recorder();
    realtime.subscribe(channelOn(server, "queries:a"), expired.listener);
    await expired.until(() => expired.failures.length > 0);
    expect(expired.failures).toEqual(["token_refused"]);
    await settle(() => server.openConnections === 0);
    expect(realtime.openConnections).toBe(0);
  });

  it("falls back when the subscription is refused (error 103), and closes the connection nothing else uses", async () => {
    const server = await start();
    const realtime = hub();
    const heard = recorder();
    realtime.subscribe(channelOn(server, "queries:a", { subscriptionToken: "forged" }), heard.listener);
    await heard.until(() => heard.failures.length > 0);
    expect(heard.failures).toEqual(["subscribe_refused"]);
    await settle(() => server.openConnections === 0);
    expect(realtime.openConnections).toBe(0);
  });

  it("reconnects after a dropped connection and recovers what was published meanwhile, each publication once", async () => {
    const server = await start();
    const realtime = hub();
    const heard = recorder();
    const subscription = realtime.subscribe(channelOn(server, "queries:a"), heard.listener);
    server.publish("queries:a", { delta: "one" });
    await heard.until(() => heard.data.length === 1);
    server.dropAll();
    await heard.until(() => heard.events.includes("interrupted"), 15_000);
    server.publish("queries:a", { delta: " two" });
    server.publish("queries:a", { delta: " three" });
    await heard.until(() => heard.data.length === 3);
    server.publish("queries:a", { delta: " four" });
    await heard.until(() => heard.data.length === 4);
    expect(heard.data).toEqual([{ delta: "one" }, { delta: " two" }, { delta: " three" }, { delta: " four" }]);
    expect(heard.events.filter((event) => event === "subscribed")).toHaveLength(2);
    expect(heard.failures).toEqual([]);
    subscription?.close();
    await settle(() => server.openConnections === 0);
  });

  it("answers the endpoint's pings, and reconnects and recovers when they stop (a silent connection)", async () => {
    const server = await start({ pingSeconds: 1 });
    // A ping may be late by a second (a busy machine) before the connection counts as silent.
    const realtime = hub([], { maxServerPingDelayMs: 1000 });
    const heard = recorder();
    const subscription = realtime.subscribe(channelOn(server, "queries:a"), heard.listener);
    await heard.until(() => heard.events.includes("subscribed"));
    await waitFor(() => server.pongs >= 2, "two pings answered");
    expect(heard.events).toEqual(["subscribed"]); // pinged, and still connected
    server.silent = true;
    server.publish("queries:a", { delta: "said while silent" });
    await heard.until(() => heard.events.includes("interrupted"), 15_000);
    server.silent = false;
    await heard.until(() => heard.data.length === 1);
    expect(heard.data).toEqual([{ delta: "said while silent" }]);
    expect(heard.failures).toEqual([]);
    subscription?.close();
    await settle(() => server.openConnections === 0);
  });

  it("gives the channel up when a dropped connection's position cannot be recovered", async () => {
    const server = await start();
    const realtime = hub();
    const heard = recorder();
    realtime.subscribe(channelOn(server, "queries:a"), heard.listener);
    await heard.until(() => heard.events.includes("subscribed"));
    server.rotateEpoch();
    server.dropAll();
    await heard.until(() => heard.failures.length > 0);
    expect(heard.failures).toEqual(["unrecoverable"]);
    await settle(() => server.openConnections === 0);
    expect(realtime.openConnections).toBe(0);
  });

  it("gives the channel up when the position from the create answer cannot be recovered", async () => {
    const server = await start();
    server.forgetPositions = true;
    const realtime = hub();
    const heard = recorder();
    realtime.subscribe(channelOn(server, "queries:a"), heard.listener);
    await heard.until(() => heard.failures.length > 0);
    expect(heard.failures).toEqual(["unrecoverable"]);
  });

  it("gives up when a live connection is closed for good (3501), and survives a 3001 restart", async () => {
    const server = await start();
    const realtime = hub();
    const heard = recorder();
    realtime.subscribe(channelOn(server, "queries:a"), heard.listener);
    await heard.until(() => heard.events.includes("subscribed"));
    server.closeAll(3001, "shutdown");
    await heard.until(() => heard.events.filter((event) => event === "subscribed").length === 2);
    expect(heard.failures).toEqual([]);
    server.closeAll(3501, "bad request");
    await heard.until(() => heard.failures.length > 0);
    expect(heard.failures).toEqual(["disconnected"]);
    expect(realtime.openConnections).toBe(0);
  });

  it("never contacts a host that is not allowed, and logs it once", async () => {
    const server = await start();
    const realtime = hub(["realtime.example.com"]);
    logs.length = 0;
    expect(realtime.subscribe(channelOn(server, "queries:a"), recorder().listener)).toBeNull();
    expect(realtime.subscribe(channelOn(server, "queries:b"), recorder().listener)).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(server.accepted).toBe(0);
    expect(fallbacks).toEqual(["host_not_allowed", "host_not_allowed"]);
    const infos = logs.map((line) => JSON.parse(line)).filter((entry) => entry.level >= 30);
    expect(infos).toHaveLength(1);
    expect(infos[0]).toMatchObject({ reason: "host_not_allowed", endpoint: new URL(server.url).origin });
  });

  it("never logs a token, whatever goes wrong", async () => {
    const server = await start();
    const realtime = hub();
    logs.length = 0;
    const heard = [recorder(), recorder(), recorder()];
    realtime.subscribe(channelOn(server, "queries:a", { token: "forged-conn-secret" }), heard[0]!.listener);
    realtime.subscribe(channelOn(server, "queries:b", { subscriptionToken: "forged-sub-secret" }), heard[1]!.listener);
    realtime.subscribe(channelOn(`ws://127.0.0.1:${new URL(server.url).port}/connection/websocket?token=query-secret`, "queries:c"), heard[2]!.listener);
    await Promise.all(heard.map((one) => one.until(() => one.failures.length > 0 || one.events.includes("subscribed"))));
    expect(logs.length).toBeGreaterThan(0);
    for (const line of logs) {
      for (const secret of ["forged-conn-secret", "forged-sub-secret", "query-secret", CONNECTION_TOKEN, SUBSCRIPTION_TOKEN]) {
        expect(line).not.toContain(secret);
      }
    }
    realtime.close();
    await settle(() => server.openConnections === 0);
  });
});
