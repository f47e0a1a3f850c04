import { describe, expect, it } from "vitest";
import { AuthenticationError, GatewayTimeoutError } from "../../../src/errors/adapter-error.js";
import type { UpstreamQuery } from "../../../src/upstream/query-schemas.js";
import type { QuerySnapshot } from "../../../src/core/query-snapshot.js";
import { toQuerySnapshot } from "../../../src/upstream/to-query-snapshot.js";
import { QueryWatcher, type WatchEnd } from "../../../src/upstream/query-watcher.js";
import type { QueryPage, WorkspaceClient } from "../../../src/upstream/workspace-client.js";
import { waitFor } from "../../helpers/wait-for.js";
import { systemClock } from "../../../src/util/clock.js";
import { UNTRACED_ANSWER } from "../../../src/telemetry/answer-trace.js";

const caller = { credential: "sk-test", workspace: "acme" };

/** A fake upstream whose list answers come from a function of the call number and cursor. */
function fakeClient(list: (call: number, cursor: string | undefined) => QueryPage | Error) {
  const calls: (string | undefined)[] = [];
  const client: WorkspaceClient = {
    baseUrl: "http://fake",
    createQuery: async () => {
      throw new Error("not used");
    },
    listQueries: async (_caller, page) => {
      calls.push(page.cursor);
      const result = list(calls.length, page.cursor);
      if (result instanceof Error) throw result;
      return result;
    },
    listWorkspaces: async () => ({ ids: [], nextCursor: null, hasMore: false }),
    checkHealth: async () => true,
    close: async () => {},
  };
  return { client, calls };
}

function watcher(client: WorkspaceClient, maxListPages = 5) {
  return new QueryWatcher({
    client,
    clock: systemClock,
    pollIntervalMinMs: 5,
    pollIntervalMaxMs: 20,
    maxListPages,
  });
}

const pending = (id: string): QuerySnapshot => toQuerySnapshot({ id, status: "PENDING" } as UpstreamQuery);
const item = (id: string, status: string, output = ""): UpstreamQuery =>
  ({ id, status, output, steps: [] }) as UpstreamQuery;

async function collect(iterable: AsyncIterable<QuerySnapshot>): Promise<QuerySnapshot[]> {
  const seen: QuerySnapshot[] = [];
  for await (const snapshot of iterable) seen.push(snapshot);
  return seen;
}

/** Follows one query with a fresh watcher and collects what it yields. */
function follow(
  client: WorkspaceClient,
  id: string,
  options: {
    signal?: AbortSignal;
    deadlineMs?: number;
    label?: string;
    maxListPages?: number;
    instance?: QueryWatcher;
    onEnd?: (end: WatchEnd) => void;
  } = {},
): Promise<QuerySnapshot[]> {
  return collect(
    (options.instance ?? watcher(client, options.maxListPages)).watch({
      caller,
      initial: pending(id),
      deadlineMs: options.deadlineMs ?? 5000,
      label: options.label ?? "q",
      signal: options.signal ?? new AbortController().signal,
      trace: UNTRACED_ANSWER,
      ...(options.onEnd ? { onEnd: options.onEnd } : {}),
    }),
  );
}

describe("QueryWatcher", () => {
  it("yields each change once and ends with the terminal snapshot", async () => {
    const states = [
      item("q1", "PROCESSING", "a"),
      item("q1", "PROCESSING", "a"),
      item("q1", "PROCESSING", "ab"),
      item("q1", "PROCESSED", "abc"),
    ];
    const { client } = fakeClient((call) => ({
      items: [states[Math.min(call, states.length) - 1] as UpstreamQuery],
      nextCursor: null,
      hasMore: false,
    }));
    const seen = await follow(client, "q1", { label: "ask query q1" });
    expect(seen.map((snapshot) => `${snapshot.status}:${snapshot.output}`)).toEqual([
      "PENDING:",
      "PROCESSING:a",
      "PROCESSING:ab",
      "PROCESSED:abc",
    ]);
  });

  it("tells once how each watch ended: terminal status, timeout or cancelled", async () => {
    const ends: WatchEnd[] = [];
    const onEnd = (end: WatchEnd) => ends.push(end);
    const done = fakeClient(() => ({ items: [item("q1", "FAILED", "boom")], nextCursor: null, hasMore: false }));
    await follow(done.client, "q1", { onEnd });
    const stalled = fakeClient(() => ({ items: [item("q2", "PROCESSING", "a")], nextCursor: null, hasMore: false }));
    await expect(follow(stalled.client, "q2", { onEnd, deadlineMs: 30 })).rejects.toBeInstanceOf(GatewayTimeoutError);
    const controller = new AbortController();
    const cancelled = follow(stalled.client, "q3", { onEnd, signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await cancelled;
    expect(ends).toEqual(["FAILED", "timeout", "cancelled"]);
  });

  it("follows next_cursor unchanged and stops at a repeated cursor", async () => {
    const { client, calls } = fakeClient((_call, cursor) =>
      cursor === "c1"
        ? { items: [item("q1", "PROCESSED")], nextCursor: "c2", hasMore: true }
        : { items: [], nextCursor: "c1", hasMore: true },
    );
    await follow(client, "q1");
    expect(calls).toEqual([undefined, "c1"]);

    const looping = fakeClient(() => ({ items: [], nextCursor: "same", hasMore: true }));
    const controller = new AbortController();
    const watch = follow(looping.client, "q9", { signal: controller.signal });
    await waitFor(() => looping.calls.filter((cursor) => cursor === undefined).length >= 2, "two polls");
    controller.abort();
    await watch;
    // Each poll: the first page, then the cursor once; the repeat is not followed.
    expect(looping.calls.filter((cursor) => cursor === "same").length).toBeLessThanOrEqual(
      looping.calls.filter((cursor) => cursor === undefined).length,
    );
  });

  it("bounds the pages followed per poll", async () => {
    let next = 0;
    const { client, calls } = fakeClient(() => ({ items: [], nextCursor: `c${++next}`, hasMore: true }));
    const controller = new AbortController();
    const watch = follow(client, "q1", { signal: controller.signal, maxListPages: 3 });
    await waitFor(() => calls.filter((cursor) => cursor === undefined).length >= 2, "two polls");
    controller.abort();
    await watch;
    const polls = calls.filter((cursor) => cursor === undefined).length;
    expect(calls.length).toBeLessThanOrEqual(polls * 3);
  });

  it("stops polling once nothing waits", async () => {
    const { client, calls } = fakeClient(() => ({
      items: [item("q1", "PROCESSING")],
      nextCursor: null,
      hasMore: false,
    }));
    const instance = watcher(client);
    const controller = new AbortController();
    const watch = follow(client, "q1", { signal: controller.signal, instance });
    await waitFor(() => calls.length >= 2, "two polls");
    controller.abort();
    await watch;
    const after = calls.length;
    await new Promise((resolve) => setTimeout(resolve, 60)); // a quiet spell of several poll intervals: nothing happens
    expect(calls.length).toBe(after);
    expect(instance.activePollers).toBe(0);
  });

  it("throws a timeout at the deadline", async () => {
    const { client } = fakeClient(() => ({
      items: [item("q1", "PROCESSING")],
      nextCursor: null,
      hasMore: false,
    }));
    await expect(
      follow(client, "q1", { deadlineMs: 40, label: "ask query q1" }),
    ).rejects.toThrow(new GatewayTimeoutError("The ask query q1 did not finish within 40 ms"));
  });

  it("fails waiters at once on a credential error, and after repeated transient errors", async () => {
    const denied = fakeClient(() => new AuthenticationError("Invalid API key"));
    await expect(
      follow(denied.client, "q1"),
    ).rejects.toBeInstanceOf(AuthenticationError);
    expect(denied.calls).toHaveLength(1);

    const flaky = fakeClient((call) =>
      call <= 2
        ? new Error("reset")
        : { items: [item("q1", "PROCESSED", "ok")], nextCursor: null, hasMore: false },
    );
    const seen = await follow(flaky.client, "q1");
    expect(seen.at(-1)?.output).toBe("ok");
  });

  it("shares one list call among all waiters of a workspace", async () => {
    const ids = ["a", "b", "c", "d"];
    const { client, calls } = fakeClient((call) => ({
      items: ids.map((id) => item(id, call >= 3 ? "PROCESSED" : "PROCESSING")),
      nextCursor: null,
      hasMore: false,
    }));
    const instance = watcher(client);
    await Promise.all(
      ids.map((id) => follow(client, id, { instance })),
    );
    expect(calls.length).toBe(3);
  });
});
