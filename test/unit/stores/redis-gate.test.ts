import { EventEmitter } from "node:events";
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { RedisGate, StoreUnavailableError } from "../../../src/stores/redis-gate.js";

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

/** A clock whose timers run only when the test says so. */
function manualClock() {
  const timers = new Map<number, () => void>();
  let next = 0;
  return {
    setTimeout: (callback: () => void) => {
      next += 1;
      timers.set(next, callback);
      return next;
    },
    clearTimeout: (handle: unknown) => {
      timers.delete(handle as number);
    },
    runAll() {
      const due = [...timers.values()];
      timers.clear();
      for (const callback of due) callback();
    },
    get pending() {
      return timers.size;
    },
  };
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
    expect(await gate.run(async () => "value")).toBe("value");
    const failure = await gate.run(timedOut).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StoreUnavailableError);
    expect(failure).toMatchObject({ status: 503, code: "store_unavailable", headers: { "retry-after": "1" } });
    expect(gate.available).toBe(true); // one failure is a slow Redis, not a down one
  });

  it("counts Redis as down after failures in a row, skips commands at once, and probes until it answers", async () => {
    const connection = new FakeConnection();
    const { gate, clock, changes } = gateOver(connection);
    await gate.run(timedOut).catch(() => undefined);
    await gate.run(async () => "ok"); // an answer in between: not in a row
    await gate.run(timedOut).catch(() => undefined);
    expect(gate.available).toBe(true);
    await gate.run(timedOut).catch(() => undefined);
    expect(gate.available).toBe(false);
    expect(changes).toEqual([false]);
    let sent = 0;
    await expect(gate.run(async () => (sent += 1))).rejects.toBeInstanceOf(StoreUnavailableError);
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
    for (let index = 0; index < 5; index += 1) await gate.run(replyError).catch(() => undefined);
    expect(gate.available).toBe(true);
  });

  it("treats a lost connection as down at once, and its reconnection as up", async () => {
    const connection = new FakeConnection();
    const { gate, changes } = gateOver(connection);
    connection.status = "reconnecting";
    connection.emit("close");
    expect(gate.available).toBe(false);
    await expect(gate.run(async () => "never")).rejects.toBeInstanceOf(StoreUnavailableError);
    connection.status = "ready";
    connection.emit("ready");
    expect(gate.available).toBe(true);
    expect(changes).toEqual([false, true]);
  });

  it("waits for the first connection at start-up, and stops waiting when it fails", async () => {
    const connecting = new FakeConnection();
    connecting.status = "connecting";
    const { gate } = gateOver(connecting);
    const command = gate.run(async () => "after connecting");
    connecting.status = "ready";
    connecting.emit("ready");
    expect(await command).toBe("after connecting");

    const refused = new FakeConnection();
    refused.status = "connecting";
    const second = gateOver(refused).gate;
    const waiting = second.run(async () => "never");
    refused.status = "reconnecting";
    refused.emit("error", new Error("connect ECONNREFUSED"));
    await expect(waiting).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(second.available).toBe(false);
  });
});
