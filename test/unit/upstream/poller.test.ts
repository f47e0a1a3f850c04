import { describe, expect, it } from "vitest";
import { AuthenticationError, UpstreamError } from "../../../src/errors/adapter-error.js";
import type { QuerySnapshot } from "../../../src/core/query-snapshot.js";
import type { Waiter } from "../../../src/upstream/mailbox.js";
import { WorkspacePoller } from "../../../src/upstream/poller.js";
import type { UpstreamQuery } from "../../../src/upstream/query-schemas.js";
import type { QueryPage, WorkspaceClient } from "../../../src/upstream/workspace-client.js";
import { UNTRACED_ANSWER } from "../../../src/telemetry/answer-trace.js";

/** A clock whose time and timers move only when the test says so. */
function manualClock() {
  let now = 0;
  const timers = new Map<number, { at: number; callback: () => void }>();
  let next = 0;
  return {
    now: () => now,
    setTimeout: (callback: () => void, ms: number) => {
      next += 1;
      timers.set(next, { at: now + ms, callback });
      return next;
    },
    clearTimeout: (handle: unknown) => void timers.delete(handle as number),
    /** Moves to the next timer and runs it; the delay it had. */
    fireNext(): number {
      const [id, timer] = [...timers.entries()].sort((a, b) => a[1].at - b[1].at)[0] ?? [];
      if (id === undefined || !timer) throw new Error("no timer");
      timers.delete(id);
      const delay = timer.at - now;
      now = timer.at;
      timer.callback();
      return delay;
    },
    get pending() {
      return timers.size;
    },
  };
}

const item = (id: string, status = "PROCESSING", output = ""): UpstreamQuery => ({ id, status, output, steps: [] }) as unknown as UpstreamQuery;
const settle = () => new Promise((resolve) => setImmediate(resolve));

function fakeClient(pages: () => QueryPage | Error) {
  const calls: { cursor: string | undefined }[] = [];
  const client: WorkspaceClient = {
    baseUrl: "http://fake",
    createQuery: async () => {
      throw new Error("not used");
    },
    listQueries: async (_caller, page) => {
      calls.push({ cursor: page.cursor });
      const result = pages();
      if (result instanceof Error) throw result;
      return result;
    },
    listWorkspaces: async () => ({ ids: [], nextCursor: null, hasMore: false }),
    checkHealth: async () => true,
    close: async () => {},
  };
  return { client, calls };
}

function recordingWaiter(id: string, since = 0): Waiter & { delivered: QuerySnapshot[]; failures: unknown[] } {
  const delivered: QuerySnapshot[] = [];
  const failures: unknown[] = [];
  return { id, since, trace: UNTRACED_ANSWER, delivered, failures, deliver: (snapshot) => delivered.push(snapshot), fail: (error) => failures.push(error), pace: () => "normal" };
}

function poller(client: WorkspaceClient, clock: ReturnType<typeof manualClock>, idle: () => void = () => {}) {
  const options = { client, clock, pollIntervalMinMs: 100, pollIntervalMaxMs: 2000, maxListPages: 3, maxConsecutiveFailures: 3 };
  return new WorkspacePoller(options, { credential: "sk-test", workspace: "acme" }, "hash", idle);
}

describe("a workspace's poller", () => {
  it("lists once for every waiter and hands each the items it waits for", async () => {
    const clock = manualClock();
    const { client, calls } = fakeClient(() => ({ items: [item("q1", "PROCESSING", "a"), item("q2", "PROCESSED", "b"), item("other")], nextCursor: null, hasMore: false }));
    const workspace = poller(client, clock);
    const [one, two] = [recordingWaiter("q1"), recordingWaiter("q2")];
    workspace.add(one);
    workspace.add(two);
    expect(workspace.waitingCount).toBe(2);
    expect(clock.fireNext()).toBe(100);
    await settle();
    expect(calls).toHaveLength(1);
    expect(one.delivered.map((snapshot) => snapshot.output)).toEqual(["a"]);
    expect(two.delivered.map((snapshot) => [snapshot.output, snapshot.status])).toEqual([["b", "PROCESSED"]]);
  });

  it("follows later pages only while a waited-for id is missing", async () => {
    const clock = manualClock();
    let page = 0;
    const { client, calls } = fakeClient(() => {
      page += 1;
      return page === 1 ? { items: [item("x")], nextCursor: "c2", hasMore: true } : { items: [item("q1")], nextCursor: "c3", hasMore: true };
    });
    const waiter = recordingWaiter("q1");
    poller(client, clock).add(waiter);
    clock.fireNext();
    await settle();
    expect(calls.map((call) => call.cursor)).toEqual([undefined, "c2"]);
    expect(waiter.delivered).toHaveLength(1);
  });

  it("backs off while polls fail, and tells the waiters after too many failures in a row", async () => {
    const clock = manualClock();
    const { client } = fakeClient(() => new UpstreamError("down"));
    const waiter = recordingWaiter("q1");
    poller(client, clock).add(waiter);
    clock.fireNext();
    await settle();
    expect(clock.fireNext()).toBe(200);
    await settle();
    expect(waiter.failures).toEqual([]);
    expect(clock.fireNext()).toBe(400);
    await settle();
    expect(waiter.failures).toHaveLength(1);
    expect(clock.pending).toBe(0);
  });

  it("tells the waiters at once of a credential problem, which polling again cannot mend", async () => {
    const clock = manualClock();
    const { client } = fakeClient(() => new AuthenticationError("bad key"));
    const waiter = recordingWaiter("q1");
    poller(client, clock).add(waiter);
    clock.fireNext();
    await settle();
    expect(waiter.failures[0]).toBeInstanceOf(AuthenticationError);
    expect(clock.pending).toBe(0);
  });

  it("stops and says it is idle when its last waiter leaves", async () => {
    const clock = manualClock();
    const { client, calls } = fakeClient(() => ({ items: [], nextCursor: null, hasMore: false }));
    let idle = 0;
    const workspace = poller(client, clock, () => (idle += 1));
    const waiter = recordingWaiter("q1");
    workspace.add(waiter);
    workspace.remove(waiter);
    expect(idle).toBe(1);
    expect(clock.pending).toBe(0);
    expect(calls).toHaveLength(0);
  });
});
