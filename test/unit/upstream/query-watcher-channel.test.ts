import { describe, expect, it } from "vitest";
import type { QuerySnapshot } from "../../../src/core/query-snapshot.js";
import type { RealtimeChannel } from "../../../src/core/realtime-channel.js";
import { QueryWatcher } from "../../../src/upstream/query-watcher.js";
import type { UpstreamQuery } from "../../../src/upstream/query-schemas.js";
import type { ChannelListener, FallbackReason, RealtimeSubscriber } from "../../../src/upstream/realtime/realtime-hub.js";
import type { QueryPage, WorkspaceClient } from "../../../src/upstream/workspace-client.js";
import { systemClock } from "../../../src/util/clock.js";

const caller = { credential: "sk-test", workspace: "acme" };
const channel: RealtimeChannel = {
  wsUrl: "ws://127.0.0.1:1/connection/websocket",
  token: "t",
  channel: "queries:q1",
  subscriptionToken: "s",
  since: { offset: 0, epoch: "e1" },
};

/** An upstream whose list shows whatever `state` holds now, counting the calls. */
function upstream() {
  const state: { item: UpstreamQuery; calls: number[] } = { item: { id: "q1", status: "PROCESSING", output: "", steps: [] }, calls: [] };
  const client: WorkspaceClient = {
    baseUrl: "http://fake",
    createQuery: async () => {
      throw new Error("not used");
    },
    listQueries: async (): Promise<QueryPage> => {
      state.calls.push(Date.now());
      return { items: [{ ...state.item }], nextCursor: null, hasMore: false };
    },
    listWorkspaces: async () => ({ ids: [], nextCursor: null, hasMore: false }),
    checkHealth: async () => true,
    close: async () => {},
  };
  return { client, state };
}

/** A realtime side the test drives by hand. */
function fakeRealtime() {
  const fake = {
    listener: null as ChannelListener | null,
    subscribed: 0,
    closed: 0,
    fallbacks: [] as FallbackReason[],
    subscriber: {
      subscribe: (_channel: RealtimeChannel, listener: ChannelListener) => {
        fake.listener = listener;
        fake.subscribed += 1;
        return { close: () => void (fake.closed += 1) };
      },
      fellBack: (reason: FallbackReason) => void fake.fallbacks.push(reason),
    } satisfies RealtimeSubscriber,
  };
  return fake;
}

const initial: QuerySnapshot = { id: "q1", status: "PENDING", output: "", steps: [], sources: [], usage: undefined, channel };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function watcherOf(client: WorkspaceClient, realtime: RealtimeSubscriber | undefined, min = 5, max = 2000) {
  return new QueryWatcher({ client, clock: systemClock, pollIntervalMinMs: min, pollIntervalMaxMs: max, maxListPages: 1, realtime });
}

/** Watches the query with its channel, collecting every snapshot until the watch ends. */
function watchCollecting(watcher: QueryWatcher): { seen: QuerySnapshot[]; watching: Promise<void> } {
  const seen: QuerySnapshot[] = [];
  const watching = (async () => {
    for await (const snapshot of watcher.watch({ caller, initial, deadlineMs: 10_000, label: "q", signal: new AbortController().signal, channel }))
      seen.push(snapshot);
  })();
  return { seen, watching };
}

describe("QueryWatcher with a realtime channel", () => {
  it("streams the channel's words while the list shows none, and ends with the list's answer as soon as the channel says it ended", async () => {
    const { client, state } = upstream();
    const realtime = fakeRealtime();
    const { seen, watching } = watchCollecting(watcherOf(client, realtime.subscriber));
    await sleep(30);
    realtime.listener?.subscribed();
    const words = ["The", " answer", " is", " 42", " [1]"];
    for (const [index, word] of words.entries()) {
      realtime.listener?.publication({ delta: word }, index + 1);
      await sleep(10);
    }
    const outputs = seen.map((snapshot) => snapshot.output).filter((output, index, all) => output !== all[index - 1]);
    expect(outputs).toEqual(["", "The", "The answer", "The answer is", "The answer is 42", "The answer is 42 [1]"]);
    state.item = { id: "q1", status: "PROCESSED", output: "The answer is 42 [1].", steps: [] };
    const endedAt = Date.now();
    realtime.listener?.publication({ status: "PROCESSED" }, words.length + 1);
    await watching;
    // The relaxed interval is 2 s: the end came from the immediate poll, not the next scheduled one.
    expect(Date.now() - endedAt).toBeLessThan(1000);
    expect(seen.at(-1)).toMatchObject({ status: "PROCESSED", output: "The answer is 42 [1]." });
    expect(realtime.closed).toBe(1);
  });

  it("relaxes polling to the slowest interval while the channel is live, and polls at the normal pace once it fails", async () => {
    const { client, state } = upstream();
    const realtime = fakeRealtime();
    const controller = new AbortController();
    const watching = (async () => {
      for await (const _snapshot of watcherOf(client, realtime.subscriber, 10, 1000).watch({
        caller, initial, deadlineMs: 10_000, label: "q", signal: controller.signal, channel,
      }));
    })();
    const started = Date.now();
    await sleep(5);
    realtime.listener?.subscribed();
    for (let offset = 1; offset <= 30; offset += 1) {
      realtime.listener?.publication({ delta: "x" }, offset);
      await sleep(20);
    }
    const whileLive = state.calls.length;
    const liveMs = Date.now() - started;
    realtime.listener?.failed("disconnected");
    const failedAt = Date.now();
    await sleep(600);
    const afterFailure = state.calls.filter((at) => at >= failedAt).length;
    const failedMs = Date.now() - failedAt;
    controller.abort();
    await watching;
    // About 600 ms live (longer on a busy machine): the first poll of a new query, then one per
    // 1,000 ms (the slowest interval) at most; then, by age (150 to 250 ms apart), several.
    expect(whileLive).toBeLessThanOrEqual(2 + Math.floor(liveMs / 1000));
    // More polls than the relaxed pace could have made in that time.
    expect(afterFailure).toBeGreaterThan(1 + Math.floor(failedMs / 1000));
    // A failed channel was already dropped by the hub: nothing is left to close.
    expect(realtime.closed).toBe(0);
  });

  it("finishes with the list when the channel loses a publication, and loses no text it already gave", async () => {
    const { client, state } = upstream();
    const realtime = fakeRealtime();
    const { seen, watching } = watchCollecting(watcherOf(client, realtime.subscriber, 5, 50));
    await sleep(5);
    realtime.listener?.subscribed();
    realtime.listener?.publication({ delta: "Hello" }, 1);
    realtime.listener?.publication({ delta: " there" }, 3);
    expect(realtime.fallbacks).toEqual(["unrecoverable"]);
    await sleep(20);
    state.item = { id: "q1", status: "PROCESSED", output: "Hello world, there", steps: [] };
    await watching;
    expect(seen.map((snapshot) => snapshot.output)).toEqual(["", "Hello", "Hello world, there"]);
    expect(realtime.closed).toBe(1);
  });

  it("sets a channel that disagrees with the list aside, and answers with the list", async () => {
    const { client, state } = upstream();
    const realtime = fakeRealtime();
    state.item = { id: "q1", status: "PROCESSING", output: "Hello world", steps: [] };
    const { seen, watching } = watchCollecting(watcherOf(client, realtime.subscriber, 5, 50));
    await sleep(5);
    realtime.listener?.subscribed();
    realtime.listener?.publication({ delta: "Goodbye" }, 1);
    await sleep(40);
    expect(realtime.fallbacks).toEqual(["diverged"]);
    state.item = { id: "q1", status: "PROCESSED", output: "Hello world.", steps: [] };
    await watching;
    expect(seen.at(-1)?.output).toBe("Hello world.");
    expect(realtime.closed).toBe(1);
  });

  it("unsubscribes when the client leaves or the deadline passes", async () => {
    const { client } = upstream();
    const realtime = fakeRealtime();
    const watcher = watcherOf(client, realtime.subscriber, 5, 50);
    const controller = new AbortController();
    const left = (async () => {
      for await (const _snapshot of watcher.watch({ caller, initial, deadlineMs: 10_000, label: "q", signal: controller.signal, channel }));
    })();
    await sleep(20);
    controller.abort();
    await left;
    expect(realtime.closed).toBe(1);
    const late = (async () => {
      for await (const _snapshot of watcher.watch({ caller, initial, deadlineMs: 30, label: "q", signal: new AbortController().signal, channel }));
    })();
    await expect(late).rejects.toThrow(/did not finish/);
    expect(realtime.subscribed).toBe(2);
    expect(realtime.closed).toBe(2);
    expect(watcher.activePollers).toBe(0);
  });

  it("subscribes to nothing for a query without a channel, for a finished query, or with realtime off", async () => {
    const { client, state } = upstream();
    state.item = { id: "q1", status: "PROCESSED", output: "done", steps: [] };
    const realtime = fakeRealtime();
    const run = async (watcher: QueryWatcher, request: { initial: QuerySnapshot; channel?: RealtimeChannel }) => {
      for await (const _snapshot of watcher.watch({ caller, deadlineMs: 5000, label: "q", signal: new AbortController().signal, ...request }));
    };
    await run(watcherOf(client, realtime.subscriber), { initial });
    await run(watcherOf(client, realtime.subscriber), { initial: { ...initial, status: "PROCESSED" }, channel });
    await run(watcherOf(client, undefined), { initial, channel });
    expect(realtime.subscribed).toBe(0);
  });
});
