import { Cluster } from "ioredis";
import { describe, expect, it, vi } from "vitest";
import type { ChannelSubscriber, SubscriberEvents } from "../../../src/redis/channel-subscriber.js";
import { RedisChannels } from "../../../src/redis/redis-channels.js";
import type { RedisGate } from "../../../src/redis/redis-gate.js";

/** A subscriber whose subscriptions the test settles by hand, and the events the channels gave it. */
function fakeSubscriber() {
  const calls: string[] = [];
  const pending: { channel: string; settle: (taken: boolean) => void }[] = [];
  let events: SubscriberEvents | undefined;
  const subscriber: ChannelSubscriber = {
    listen: (channel, mode) => {
      calls.push(`listen ${channel} ${mode}`);
      return new Promise((resolve, reject) => pending.push({ channel, settle: (taken) => (taken ? resolve(1) : reject(new Error("not now"))) }));
    },
    stop: (channel, mode) => calls.push(`stop ${channel} ${mode}`),
    close: () => calls.push("close"),
  };
  return {
    calls,
    open: (given: SubscriberEvents) => {
      events = given;
      return subscriber;
    },
    get events() {
      return events as SubscriberEvents;
    },
    /** Settles the oldest subscription under way, and lets the channels see it. */
    async settle(taken: boolean) {
      pending.shift()?.settle(taken);
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

function channelsWith(subscriber: ReturnType<typeof fakeSubscriber>, gate = { redis: {} } as unknown as RedisGate) {
  const timers: (() => void)[] = [];
  const events = { message: vi.fn(), resubscribed: vi.fn(), subscribeFailed: vi.fn() };
  const channels = new RedisChannels(gate, subscriber.open, { setTimeout: (callback: () => void) => timers.push(callback) }, events);
  return { channels, events, timers };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("RedisChannels", () => {
  it("tries a subscription again until Redis takes it, and hands on messages", async () => {
    const subscriber = fakeSubscriber();
    const { channels, events, timers } = channelsWith(subscriber);
    channels.subscribe("poll:{a}");
    await tick();
    await subscriber.settle(false);
    expect(events.subscribeFailed).toHaveBeenCalledTimes(1);
    expect(timers).toHaveLength(1);
    timers.shift()?.();
    await tick();
    await subscriber.settle(true);
    expect(subscriber.calls).toEqual(["listen poll:{a} classic", "listen poll:{a} classic"]);
    // A first subscription is not a lost one: nothing to read again.
    expect(events.resubscribed).not.toHaveBeenCalled();
    subscriber.events.message("poll:{a}", "hello");
    expect(events.message).toHaveBeenCalledWith("poll:{a}", "hello");
  });

  it("listens again to the channels a subscriber lost, and says so for each once Redis has taken it, not before", async () => {
    const subscriber = fakeSubscriber();
    const { channels, events, timers } = channelsWith(subscriber);
    for (const channel of ["poll:{a}", "poll:{b}", "poll:{c}"]) channels.subscribe(channel);
    await tick();
    for (let index = 0; index < 3; index += 1) await subscriber.settle(true);

    subscriber.events.lost(["poll:{b}", "poll:{gone}"]);
    await tick();
    expect(subscriber.calls.slice(3)).toEqual(["listen poll:{b} classic"]);
    expect(events.resubscribed).not.toHaveBeenCalled();
    // Refused at first (its master is failing over), taken on the next try.
    await subscriber.settle(false);
    timers.shift()?.();
    await tick();
    await subscriber.settle(true);
    expect(events.resubscribed.mock.calls).toEqual([["poll:{b}"]]);

    // A connection that came back lost everything it held.
    subscriber.events.lost();
    await tick();
    for (let index = 0; index < 3; index += 1) await subscriber.settle(true);
    expect(events.resubscribed.mock.calls.slice(1).map(([channel]) => channel).sort()).toEqual(["poll:{a}", "poll:{b}", "poll:{c}"]);
  });

  it("lets go of a channel no longer wanted, even when Redis takes it after it was given up", async () => {
    const subscriber = fakeSubscriber();
    const { channels, events, timers } = channelsWith(subscriber);
    channels.subscribe("poll:{a}");
    await tick();
    channels.unsubscribe("poll:{a}");
    await subscriber.settle(true);
    expect(subscriber.calls.filter((call) => call.startsWith("stop"))).toEqual(["stop poll:{a} classic", "stop poll:{a} classic"]);

    // Refused, then no longer wanted: not tried again, not counted.
    channels.subscribe("poll:{b}");
    await tick();
    channels.unsubscribe("poll:{b}");
    await subscriber.settle(false);
    expect(events.subscribeFailed).not.toHaveBeenCalled();
    expect(timers).toHaveLength(0);
    channels.close();
    expect(subscriber.calls.at(-1)).toBe("close");
  });

  it("in a cluster, decides sharded or classic once Redis has said, not while it does not answer", async () => {
    const answers = [Promise.reject(new Error("no answer within 1000 ms")), Promise.resolve([["spublish"]])];
    const run = vi.fn(() => answers.shift() as Promise<unknown>);
    // A cluster client that never connects: only its class is read.
    const gate = { redis: Object.create(Cluster.prototype), run } as unknown as RedisGate;
    const subscriber = fakeSubscriber();
    const { channels, events, timers } = channelsWith(subscriber, gate);
    channels.subscribe("poll:{a}");
    await tick();
    expect(events.subscribeFailed).toHaveBeenCalledTimes(1);
    expect(subscriber.calls).toEqual([]);
    timers.shift()?.();
    await tick();
    expect(subscriber.calls).toEqual(["listen poll:{a} sharded"]);
    expect(await channels.pubSubMode()).toBe("sharded");
    expect(run).toHaveBeenCalledTimes(2);
  });
});
