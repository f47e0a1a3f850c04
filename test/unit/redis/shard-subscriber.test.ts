import { EventEmitter } from "node:events";
import { describe, expect, it, vi } from "vitest";
import type { SubscriberEvents } from "../../../src/redis/channel-subscriber.js";
import { keySlot } from "../../../src/redis/key-slot.js";
import { type NodeConnection, ShardSubscriber } from "../../../src/redis/shard-subscriber.js";

/** A cluster command client's slot map, which the test rewrites and announces as ioredis does (`refresh`). */
class FakeMap extends EventEmitter {
  slots: string[][] = Array.from({ length: 16384 }, () => ["a:1"]);
  refreshSlotsCache = vi.fn();

  /** Gives the channel's slot to `node`, without telling anyone yet. */
  give(channel: string, node: string): void {
    this.slots[keySlot(channel)] = [node];
  }

  learnt(): void {
    this.emit("refresh");
  }
}

/** Nodes the subscriber connects to: each connection records its commands; a dead node's connection fails and ends. */
function fakeNodes() {
  const dead = new Set<string>();
  const opened: { node: string; connection: FakeConnection }[] = [];
  class FakeConnection extends EventEmitter {
    readonly commands: string[] = [];
    disconnected = false;
    constructor(readonly node: string) {
      super();
      if (dead.has(node)) queueMicrotask(() => this.end());
    }

    private command(name: string, channel: string): Promise<unknown> {
      this.commands.push(`${name} ${channel}`);
      if (dead.has(this.node) || this.disconnected) return Promise.reject(new Error("Connection is closed."));
      return Promise.resolve(1);
    }

    ssubscribe = (channel: string) => this.command("ssubscribe", channel);
    sunsubscribe = (channel: string) => this.command("sunsubscribe", channel);
    subscribe = (channel: string) => this.command("subscribe", channel);
    unsubscribe = (channel: string) => this.command("unsubscribe", channel);
    disconnect = () => {
      this.disconnected = true;
    };

    /** The connection is gone for good (ioredis's `end`, with no reconnection). */
    end(): void {
      this.disconnected = true;
      this.emit("end");
    }
  }
  return {
    dead,
    opened,
    connect: (node: string) => {
      const connection = new FakeConnection(node);
      opened.push({ node, connection });
      return connection as unknown as NodeConnection;
    },
    /** The connections to `node` still open. */
    live: (node: string) => opened.filter((entry) => entry.node === node && !entry.connection.disconnected).map((entry) => entry.connection),
  };
}

function subscriberOn(map: FakeMap) {
  const nodes = fakeNodes();
  const events = { message: vi.fn(), lost: vi.fn() } satisfies SubscriberEvents;
  const subscriber = new ShardSubscriber({ map, connect: nodes.connect, events });
  return { subscriber, nodes, events };
}

describe("ShardSubscriber", () => {
  it("subscribes each channel on its slot's master, one connection per master with a channel, and hands on what any of them hears", async () => {
    const map = new FakeMap();
    map.give("poll:{x}", "b:2");
    const { subscriber, nodes, events } = subscriberOn(map);
    await subscriber.listen("poll:{x}", "sharded");
    await subscriber.listen("poll:{y}", "sharded");
    await subscriber.listen("poll:{z}", "sharded");
    expect(nodes.opened.map((entry) => entry.node)).toEqual(["b:2", "a:1"]);
    expect(nodes.live("b:2")[0]?.commands).toEqual(["ssubscribe poll:{x}"]);
    expect(nodes.live("a:1")[0]?.commands).toEqual(["ssubscribe poll:{y}", "ssubscribe poll:{z}"]);
    // Asked again where it already is: nothing is sent.
    await subscriber.listen("poll:{x}", "sharded");
    expect(nodes.live("b:2")[0]?.commands).toHaveLength(1);

    nodes.live("b:2")[0]?.emit("smessage", "poll:{x}", "hello");
    nodes.live("a:1")[0]?.emit("smessage", "poll:{y}", "there");
    expect(events.message.mock.calls).toEqual([["poll:{x}", "hello"], ["poll:{y}", "there"]]);
  });

  it("when a master's connection ends, hands its channels back to be listened to again, which fails until the map names the master's replica", async () => {
    const map = new FakeMap();
    map.give("poll:{x}", "b:2");
    const { subscriber, nodes, events } = subscriberOn(map);
    await subscriber.listen("poll:{x}", "sharded");
    await subscriber.listen("poll:{y}", "sharded");

    // b:2 dies.
    nodes.dead.add("b:2");
    nodes.live("b:2")[0]?.end();
    expect(events.lost.mock.calls).toEqual([[["poll:{x}"]]]);
    expect(map.refreshSlotsCache).toHaveBeenCalled();
    // The map still names it: listening fails, and the connection is not kept.
    await expect(subscriber.listen("poll:{x}", "sharded")).rejects.toThrow();
    expect(nodes.live("b:2")).toEqual([]);

    // Its replica c:3 is promoted, and the client learns the map: the channel is taken there.
    map.give("poll:{x}", "c:3");
    map.learnt();
    await subscriber.listen("poll:{x}", "sharded");
    expect(nodes.live("c:3")[0]?.commands).toEqual(["ssubscribe poll:{x}"]);
    // The other master's channel was never touched.
    expect(nodes.live("a:1")[0]?.commands).toEqual(["ssubscribe poll:{y}"]);
    expect(events.lost).toHaveBeenCalledTimes(1);
  });

  it("moves a channel whose slot a new map gives to another master, and closes a connection left with no channel", async () => {
    const map = new FakeMap();
    const { subscriber, nodes, events } = subscriberOn(map);
    await subscriber.listen("poll:{x}", "sharded");
    const first = nodes.live("a:1")[0];

    map.learnt();
    expect(events.lost).not.toHaveBeenCalled();

    map.give("poll:{x}", "b:2");
    map.learnt();
    expect(events.lost.mock.calls).toEqual([[["poll:{x}"]]]);
    // Nothing else was wanted on a:1: its connection is closed rather than told.
    expect(first?.disconnected).toBe(true);
    await subscriber.listen("poll:{x}", "sharded");
    expect(nodes.live("b:2")[0]?.commands).toEqual(["ssubscribe poll:{x}"]);
  });

  it("tells a node that keeps other channels to stop one that moved or is no longer wanted", async () => {
    const map = new FakeMap();
    const { subscriber, nodes } = subscriberOn(map);
    await subscriber.listen("poll:{x}", "sharded");
    await subscriber.listen("poll:{y}", "classic");
    const connection = nodes.live("a:1")[0];
    map.give("poll:{x}", "b:2");
    map.learnt();
    subscriber.stop("poll:{nothing}", "sharded");
    expect(connection?.commands).toEqual(["ssubscribe poll:{x}", "subscribe poll:{y}", "sunsubscribe poll:{x}"]);
    subscriber.stop("poll:{y}", "classic");
    // The last channel gone: closed, not told.
    expect(connection?.commands).toHaveLength(3);
    expect(connection?.disconnected).toBe(true);
  });

  it("asks for the map again when a node says a channel moved, and refuses a channel whose slot has no known master yet", async () => {
    const map = new FakeMap();
    const { subscriber, nodes } = subscriberOn(map);
    await subscriber.listen("poll:{x}", "sharded");
    nodes.live("a:1")[0]?.emit("moved");
    expect(map.refreshSlotsCache).toHaveBeenCalledTimes(1);

    map.slots[keySlot("poll:{w}")] = [];
    await expect(subscriber.listen("poll:{w}", "sharded")).rejects.toThrow(/no master/);
    expect(map.refreshSlotsCache).toHaveBeenCalledTimes(2);
  });

  it("does not count a subscription taken by a node whose slot moved meanwhile, and stops listening to the map once closed", async () => {
    const map = new FakeMap();
    const { subscriber, events } = subscriberOn(map);
    const taking = subscriber.listen("poll:{x}", "sharded");
    map.give("poll:{x}", "b:2");
    map.learnt();
    await expect(taking).rejects.toThrow(/changed/);
    expect(events.lost).not.toHaveBeenCalled();

    subscriber.close();
    expect(map.listenerCount("refresh")).toBe(0);
    await expect(subscriber.listen("poll:{x}", "sharded")).rejects.toThrow(/closed/);
  });
});
