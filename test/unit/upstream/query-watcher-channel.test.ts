import { describe, expect, it } from "vitest";
import type { QuerySnapshot } from "../../../src/core/query-snapshot.js";
import type { RealtimeChannel } from "../../../src/core/realtime-channel.js";
import { QueryWatcher } from "../../../src/upstream/query-watcher.js";
import type { UpstreamQuery } from "../../../src/upstream/query-schemas.js";
import type { ChannelListener, FallbackReason, RealtimeSubscriber } from "../../../src/upstream/realtime/realtime-hub.js";
import type { QueryPage, WorkspaceClient } from "../../../src/upstream/workspace-client.js";
import { type Clock, systemClock } from "../../../src/util/clock.js";
import { waitFor } from "../../helpers/wait-for.js";
import { UNTRACED_ANSWER } from "../../../src/telemetry/answer-trace.js";

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

function watcherOf(client: WorkspaceClient, realtime: RealtimeSubscriber | undefined, min = 5, max = 2000, clock: Clock = systemClock) {
  return new QueryWatcher({ client, clock, pollIntervalMinMs: min, pollIntervalMaxMs: max, maxListPages: 1, realtime });
}

/** The real clock, recording the delay of every timer set on it: the pace a watcher asks for, whatever the machine's. */
function recordingClock(): Clock & { delays: number[] } {
  const delays: number[] = [];
  return { ...systemClock, delays, setTimeout: (callback, ms) => (delays.push(ms), systemClock.setTimeout(callback, ms)) };
}

/** Watches the query with its channel, collecting every snapshot until the watch ends. */
function watchCollecting(watcher: QueryWatcher): { seen: QuerySnapshot[]; watching: Promise<void> } {
  const seen: QuerySnapshot[] = [];
  const watching = (async () => {
    for await (const snapshot of watcher.watch({ caller, initial, deadlineMs: 10_000, label: "q", trace: UNTRACED_ANSWER, signal: new AbortController().signal, channel }))
      seen.push(snapshot);
  })();
  return { seen, watching };
}

describe("QueryWatcher with a realtime channel", () => {
  it("streams the channel's words while the list shows none, and ends with the list's answer as soon as the channel says it ended", async () => {
    const { client, state } = upstream();
    const realtime = fakeRealtime();
    // The slowest interval is a minute: only the poll the channel's end asks for can end the watch in the test's time.
    const { seen, watching } = watchCollecting(watcherOf(client, realtime.subscriber, 5, 60_000));
    await waitFor(() => realtime.listener, "the subscription");
    realtime.listener?.subscribed();
    const words = ["The", " answer", " is", " 42", " [1]"];
    let expected = "";
    for (const [index, word] of words.entries()) {
      realtime.listener?.publication({ delta: word }, index + 1);
      expected += word;
      await waitFor(() => seen.at(-1)?.output === expected, `"${expected}" to be seen`);
    }
    const outputs = seen.map((snapshot) => snapshot.output).filter((output, index, all) => output !== all[index - 1]);
    expect(outputs).toEqual(["", "The", "The answer", "The answer is", "The answer is 42", "The answer is 42 [1]"]);
    state.item = { id: "q1", status: "PROCESSED", output: "The answer is 42 [1].", steps: [] };
    realtime.listener?.publication({ status: "PROCESSED" }, words.length + 1);
    await watching;
    expect(seen.at(-1)).toMatchObject({ status: "PROCESSED", output: "The answer is 42 [1]." });
    expect(realtime.closed).toBe(1);
  });

  it("relaxes polling to the slowest interval while the channel is live, and polls at the normal pace once it fails", async () => {
    const { client, state } = upstream();
    const realtime = fakeRealtime();
    const controller = new AbortController();
    const clock = recordingClock();
    const watching = (async () => {
      for await (const _snapshot of watcherOf(client, realtime.subscriber, 10, 1000, clock).watch({
        caller, initial, deadlineMs: 10_000, label: "q", trace: UNTRACED_ANSWER, signal: controller.signal, channel,
      }));
    })();
    // The delays of the polls (the watch's deadline, 10 s, is a timer of the clock too).
    const pollDelays = (from: number) => clock.delays.slice(from).filter((ms) => ms !== 10_000);
    await waitFor(() => realtime.listener, "the subscription");
    realtime.listener?.subscribed();
    const subscribedAt = clock.delays.length;
    // A channel speaking every 20 ms, until a poll has been scheduled while it is live.
    for (let offset = 1; offset <= 30 || pollDelays(subscribedAt).length === 0; offset += 1) {
      realtime.listener?.publication({ delta: "x" }, offset);
      await sleep(20);
    }
    const whileLive = pollDelays(subscribedAt);
    realtime.listener?.failed("disconnected");
    const failedAt = state.calls.length;
    const failedDelaysAt = clock.delays.length;
    await waitFor(() => state.calls.length >= failedAt + 3, "polls after the channel failed");
    const afterFailure = pollDelays(failedDelaysAt);
    controller.abort();
    await watching;
    // While the channel is live, every poll is a slowest interval (1,000 ms) away; once it failed,
    // by age (150 to 250 ms), far sooner.
    expect(whileLive.length).toBeGreaterThan(0);
    expect(whileLive.every((ms) => ms === 1000), `${whileLive}`).toBe(true);
    expect(afterFailure.length).toBeGreaterThan(1);
    expect(afterFailure.every((ms) => ms < 1000), `${afterFailure}`).toBe(true);
    // A failed channel was already dropped by the hub: nothing is left to close.
    expect(realtime.closed).toBe(0);
  });

  it("finishes with the list when the channel loses a publication, and loses no text it already gave", async () => {
    const { client, state } = upstream();
    const realtime = fakeRealtime();
    const { seen, watching } = watchCollecting(watcherOf(client, realtime.subscriber, 5, 50));
    await waitFor(() => realtime.listener, "the subscription");
    realtime.listener?.subscribed();
    realtime.listener?.publication({ delta: "Hello" }, 1);
    realtime.listener?.publication({ delta: " there" }, 3);
    expect(realtime.fallbacks).toEqual(["unrecoverable"]);
    await waitFor(() => seen.some((snapshot) => snapshot.output === "Hello"), "the text the channel gave");
    state.item = { id: "q1", status: "PROCESSED", output: "Hello world, there", steps: [] };
    await watching;
    // The texts in order (a poll may repeat one with a new status first, depending on the machine's pace).
    const outputs = seen.map((snapshot) => snapshot.output).filter((output, index, all) => output !== all[index - 1]);
    expect(outputs).toEqual(["", "Hello", "Hello world, there"]);
    expect(realtime.closed).toBe(1);
  });

  it("sets a channel that disagrees with the list aside, and answers with the list", async () => {
    const { client, state } = upstream();
    const realtime = fakeRealtime();
    state.item = { id: "q1", status: "PROCESSING", output: "Hello world", steps: [] };
    const { seen, watching } = watchCollecting(watcherOf(client, realtime.subscriber, 5, 50));
    await waitFor(() => realtime.listener, "the subscription");
    realtime.listener?.subscribed();
    realtime.listener?.publication({ delta: "Goodbye" }, 1);
    await waitFor(() => realtime.fallbacks.length > 0, "the channel set aside");
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
      for await (const _snapshot of watcher.watch({ caller, initial, deadlineMs: 10_000, label: "q", trace: UNTRACED_ANSWER, signal: controller.signal, channel }));
    })();
    await waitFor(() => realtime.subscribed === 1, "the subscription");
    controller.abort();
    await left;
    expect(realtime.closed).toBe(1);
    const late = (async () => {
      for await (const _snapshot of watcher.watch({ caller, initial, deadlineMs: 30, label: "q", trace: UNTRACED_ANSWER, signal: new AbortController().signal, channel }));
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
      for await (const _snapshot of watcher.watch({ caller, deadlineMs: 5000, label: "q", trace: UNTRACED_ANSWER, signal: new AbortController().signal, ...request }));
    };
    await run(watcherOf(client, realtime.subscriber), { initial });
    await run(watcherOf(client, realtime.subscriber), { initial: { ...initial, status: "PROCESSED" }, channel });
    await run(watcherOf(client, undefined), { initial, channel });
    expect(realtime.subscribed).toBe(0);
  });
});
