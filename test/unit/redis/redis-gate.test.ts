import { EventEmitter } from "node:events";
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { RedisGate } from "../../../src/redis/redis-gate.js";
import { StoreUnavailableError } from "../../../src/redis/store-unavailable-error.js";
import { manualClock } from "../../helpers/manual-clock.js";

/** A stand-in for an ioredis connection: a status, events, and a PING whose answer the test decides. */
class FakeConnection extends EventEmitter {
  status = "ready";
  pings = 0;
  pingAnswers = true;
  disconnected = false;
  async ping() {
    this.pings += 1;
    if (!this.pingAnswers) throw new Error("Command timed out");
    return "PONG";
  }
  disconnect() {
    this.disconnected = true;
  }
}

function gateOver(connection: FakeConnection) {
  const clock = manualClock();
  const changes: boolean[] = [];
  const gate = new RedisGate(connection as unknown as Redis, {
    failuresToDown: 2,
    probeIntervalMs: 500,
    firstConnectMs: 2000,
    deadlineMs: 1000,
    clock,
    events: { onAvailability: (available) => changes.push(available) },
  });
  return { gate, clock, changes };
}

const timedOut = () => Promise.reject(new Error("Command timed out"));
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("RedisGate", () => {
  it("sends commands while Redis answers, and wraps a failure as StoreUnavailableError (a 503), never as a result", async () => {
    const { gate } = gateOver(new FakeConnection());
    expect(await gate.run("key", async () => "value")).toBe("value");
    const failure = await gate.run("key", timedOut).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StoreUnavailableError);
    expect(failure).toMatchObject({ status: 503, code: "store_unavailable", headers: { "retry-after": "1" } });
    expect(gate.available).toBe(true); // one failure is a slow Redis, not a down one
  });

  it("counts Redis as down after failures in a row, skips commands at once, and probes until it answers", async () => {
    const connection = new FakeConnection();
    const { gate, clock, changes } = gateOver(connection);
    await gate.run("key", timedOut).catch(() => undefined);
    await gate.run("key", async () => "ok"); // an answer in between: not in a row
    await gate.run("key", timedOut).catch(() => undefined);
    expect(gate.available).toBe(true);
    await gate.run("key", timedOut).catch(() => undefined);
    expect(gate.available).toBe(false);
    expect(changes).toEqual([false]);
    let sent = 0;
    await expect(gate.run("key", async () => (sent += 1))).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(sent).toBe(0);
    connection.pingAnswers = false;
    clock.runAll();
    await settle();
    expect(connection.pings).toBe(1);
    expect(gate.available).toBe(false);
    const woken = gate.nextAvailable();
    connection.pingAnswers = true;
    clock.runAll();
    await settle();
    await woken;
    expect(gate.available).toBe(true);
    expect(changes).toEqual([false, true]);
    expect(clock.pending).toBe(0);
  });

  it("does not count a reply error (Redis answering) as an outage", async () => {
    const { gate } = gateOver(new FakeConnection());
    const replyError = () => Promise.reject(Object.assign(new Error("WRONGTYPE"), { name: "ReplyError" }));
    for (let index = 0; index < 5; index += 1) await gate.run("key", replyError).catch(() => undefined);
    expect(gate.available).toBe(true);
  });

  it("treats a lost connection as down at once, and its reconnection as up", async () => {
    const connection = new FakeConnection();
    const { gate, changes } = gateOver(connection);
    connection.status = "reconnecting";
    connection.emit("close");
    expect(gate.available).toBe(false);
    await expect(gate.run("key", async () => "never")).rejects.toBeInstanceOf(StoreUnavailableError);
    connection.status = "ready";
    connection.emit("ready");
    expect(gate.available).toBe(true);
    expect(changes).toEqual([false, true]);
  });

  it("ends an outage of a lost connection by a PING when the close came after its replacement was ready", async () => {
    const connection = new FakeConnection();
    const { gate, clock, changes } = gateOver(connection);
    // A Sentinel failover: the new master's connection is ready, then the old one's close arrives.
    connection.emit("close");
    expect(gate.available).toBe(false);
    await expect(gate.run("key", async () => "never")).rejects.toBeInstanceOf(StoreUnavailableError);
    const woken = gate.nextAvailable();
    clock.runAll();
    await settle();
    await woken;
    expect(connection.pings).toBe(1);
    expect(gate.available).toBe(true);
    expect(await gate.run("key", async () => "sent")).toBe("sent");
    expect(changes).toEqual([false, true]);
    expect(clock.pending).toBe(0);
  });

  it("waits for the first connection at start-up, and stops waiting when it fails", async () => {
    const connecting = new FakeConnection();
    connecting.status = "connecting";
    const { gate } = gateOver(connecting);
    const command = gate.run("key", async () => "after connecting");
    connecting.status = "ready";
    connecting.emit("ready");
    expect(await command).toBe("after connecting");

    const refused = new FakeConnection();
    refused.status = "connecting";
    const second = gateOver(refused).gate;
    const waiting = second.run("key", async () => "never");
    refused.status = "reconnecting";
    refused.emit("error", new Error("connect ECONNREFUSED"));
    await expect(waiting).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(second.available).toBe(false);
  });

  it("counts commands that time out together as one failure, and a node that answered since a command was sent as slow, not down", async () => {
    const { gate, changes } = gateOver(new FakeConnection());
    // Three commands in flight at one slow moment all time out: one observation, not three failures in a row.
    const late = () => new Promise<never>((_, reject) => setImmediate(() => reject(new Error("Command timed out"))));
    await Promise.all([gate.run("a", late), gate.run("b", late), gate.run("c", late)].map((pending) => pending.catch(() => undefined)));
    expect(gate.available).toBe(true);
    // A command sent before an answer came, failing after it: the node answers, so it is slow, not down.
    let fail: (error: Error) => void = () => undefined;
    const slow = gate.run("a", () => new Promise<never>((_, reject) => (fail = reject)));
    await gate.run("b", async () => "ok");
    fail(new Error("Command timed out"));
    await slow.catch(() => undefined);
    await gate.run("c", timedOut).catch(() => undefined);
    expect(gate.available).toBe(true);
    // Failures one after another, with no answer between them: down.
    await gate.run("a", timedOut).catch(() => undefined);
    expect(gate.available).toBe(false);
    expect(changes).toEqual([false]);
    gate.close();
  });

  /** A gate on a cluster of three masters whose third ("foo"'s) has failed twice in a row: it counts as down. */
  async function clusterWithDeadMaster() {
    const cluster = new FakeCluster();
    const clock = manualClock();
    const gate = new RedisGate(cluster as unknown as Redis, { failuresToDown: 2, probeIntervalMs: 500, firstConnectMs: 2000, deadlineMs: 1000, clock, cluster });
    cluster.owners = ["127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"];
    await gate.run("foo", timedOut).catch(() => undefined);
    await gate.run("foo", timedOut).catch(() => undefined);
    expect(gate.availableFor("foo")).toBe(false);
    return { cluster, clock, gate };
  }

  it("in a cluster, keeps a dead master down while the slot map still names it, though its connection left the client's pool", async () => {
    const { cluster, clock, gate } = await clusterWithDeadMaster();
    // No connection to it any more (ioredis drops a node whose connection ended), but its slots are still its own.
    clock.runAll();
    await settle();
    expect(gate.availableFor("foo")).toBe(false);
    expect(cluster.refreshes).toBe(1);
    // Its replica took over: the next probe forgets it.
    cluster.owners = ["127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7005"];
    clock.runAll();
    await settle();
    expect(clock.pending).toBe(0);
    expect(gate.availableFor("foo")).toBe(true);
    gate.close();
  });

  it("in a cluster, ends a dead master's outage as soon as a new slot map hands its slots to another node, not at its next probe", async () => {
    const { cluster, clock, gate } = await clusterWithDeadMaster();
    // A map that still names it changes nothing.
    cluster.emit("refresh");
    expect(gate.availableFor("foo")).toBe(false);
    // Its replica took over: the client's next map (whoever asked for it) ends the outage, no probe run.
    cluster.owners = ["127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7005"];
    let woken = false;
    void gate.nextAvailable().then(() => (woken = true));
    cluster.emit("refresh");
    expect(gate.availableFor("foo")).toBe(true);
    await settle();
    // The writes waiting for a node to answer again were woken; its probe was stopped.
    expect(woken).toBe(true);
    expect(clock.pending).toBe(0);
    gate.close();
  });

  it("in a cluster, stops waiting for a failing master only: keys of the other masters are sent as before", async () => {
    const cluster = new FakeCluster();
    const clock = manualClock();
    const changes: boolean[] = [];
    const gate = new RedisGate(cluster as unknown as Redis, {
      failuresToDown: 2,
      probeIntervalMs: 500,
      firstConnectMs: 2000,
      deadlineMs: 1000,
      clock,
      events: { onAvailability: (available) => changes.push(available) },
      cluster,
    });
    // "foo" (slot 12182) is on the third master, "bar" (slot 5061) on the first.
    cluster.owners = ["127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"];
    await gate.run("foo", timedOut).catch(() => undefined);
    await gate.run("bar", async () => "ok"); // another node's answer does not break the failing node's run
    await gate.run("foo", timedOut).catch(() => undefined);
    expect(gate.availableFor("foo")).toBe(false);
    expect(gate.availableFor("bar")).toBe(true);
    expect(gate.available).toBe(true);
    expect(changes).toEqual([]);
    let sent = 0;
    await expect(gate.run("foo", async () => (sent += 1))).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(sent).toBe(0);
    expect(await gate.run("bar", async () => "still")).toBe("still");
    // A key with the failing key's hash tag is on the same slot: not sent either.
    await expect(gate.run("x{foo}y", async () => "never")).rejects.toBeInstanceOf(StoreUnavailableError);

    // The probe PINGs the failing master; it does not answer, so the slots are read again.
    cluster.master("127.0.0.1:7002").pingAnswers = false;
    const woken = gate.nextAvailable();
    clock.runAll();
    await settle();
    expect(cluster.master("127.0.0.1:7002").pings).toBe(1);
    expect(cluster.refreshes).toBe(1);
    // Its replica took over: the slot has a new owner, whose commands are sent at once.
    cluster.owners = ["127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7005"];
    expect(await gate.run("foo", async () => "from the new master")).toBe("from the new master");
    // The old master left the client's map: the next probe forgets it.
    cluster.masters.delete("127.0.0.1:7002");
    clock.runAll();
    await settle();
    await woken;
    expect(clock.pending).toBe(0);
    gate.close();
  });
});

/** A stand-in for an ioredis Cluster: three slot ranges whose owners the test decides, and their master connections. */
class FakeCluster extends EventEmitter {
  status = "ready";
  owners: string[] = [];
  refreshes = 0;
  readonly masters = new Map<string, FakeConnection>();
  disconnected = false;
  get slots(): string[][] {
    return Array.from({ length: 16384 }, (_, slot) => [this.owners[Math.floor((slot * 3) / 16384)] as string]);
  }
  nodes() {
    return [...this.masters.entries()].map(([name, connection]) => {
      const [host, port] = name.split(":");
      return Object.assign(connection, { options: { host, port: Number(port) } });
    });
  }
  master(name: string): FakeConnection {
    let connection = this.masters.get(name);
    if (!connection) {
      connection = new FakeConnection();
      this.masters.set(name, connection);
    }
    return connection;
  }
  refreshSlotsCache() {
    this.refreshes += 1;
  }
  async ping() {
    return "PONG";
  }
  disconnect() {
    this.disconnected = true;
  }
}
