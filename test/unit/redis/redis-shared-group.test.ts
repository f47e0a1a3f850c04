import { describe, expect, it } from "vitest";
import type { RedisGate } from "../../../src/redis/redis-gate.js";
import { type FallbackReason, type GroupContext, RedisSharedGroup } from "../../../src/redis/redis-shared-group.js";
import { manualClock } from "../../helpers/manual-clock.js";

/** One command the gate was asked to run, which the test answers (the lease and the others' ids) or fails. */
interface Sent {
  key: string | null;
  answer(value: unknown): void;
  fail(error: Error): void;
}

/** A group over a gate whose commands wait for the test, with what it reported. */
function groupOver(leaseWaitMs = 100) {
  const clock = manualClock();
  const sent: Sent[] = [];
  const fallbacks: FallbackReason[] = [];
  const leases: string[] = [];
  const run = ((key: string | null) =>
    new Promise((resolve, reject) => {
      sent.push({ key, answer: resolve, fail: reject });
    })) as RedisGate["run"];
  const context: GroupContext = {
    redis: { run },
    channels: { publish: async () => undefined },
    replica: "me",
    leaseMs: 1500,
    leaseWaitMs,
    clock,
    onLease: (change) => leases.push(change),
    recovered: () => undefined,
    fellBack: (reason) => fallbacks.push(reason),
    forget: () => undefined,
  };
  const group = new RedisSharedGroup(context, "h:acme", { lease: "{h:acme}:lease", waiting: "{h:acme}:waiting", channel: "{h:acme}:snapshots" }, () => undefined, () => undefined);
  return { group, clock, sent, fallbacks, leases };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("RedisSharedGroup", () => {
  it("polls for the others too when Redis grants it the lease, and leaves the polling to the holder otherwise", async () => {
    const { group, sent, leases, clock, fallbacks } = groupOver();
    const holding = group.turn(["q1"]);
    await settle();
    sent[0]?.answer({ holds: true, others: ["q2"] });
    expect(await holding).toEqual({ poll: true, othersWaitFor: ["q2"] });
    expect(group.isHolding).toBe(true);
    const other = group.turn(["q1"]);
    await settle();
    sent[1]?.answer({ holds: false, others: [] });
    expect(await other).toEqual({ poll: false, othersWaitFor: [] });
    expect(leases).toEqual(["acquired", "lost"]);
    // A holder not heard from for a lease's time is polled around.
    clock.advance(2000);
    const around = group.turn(["q1"]);
    await settle();
    sent[2]?.answer({ holds: false, others: [] });
    expect(await around).toEqual({ poll: true, othersWaitFor: [] });
    expect(fallbacks).toEqual(["silent_holder"]);
  });

  it("polls alone at once when Redis fails", async () => {
    const { group, sent, fallbacks } = groupOver();
    const turn = group.turn(["q1"]);
    await settle();
    sent[0]?.fail(new Error("Connection is closed."));
    expect(await turn).toEqual({ poll: true, othersWaitFor: [] });
    expect(fallbacks).toEqual(["redis"]);
  });

  it("never holds a poll for Redis past the lease wait, sends no second turn while one is unanswered, and takes the lease Redis grants late", async () => {
    const { group, sent, clock, fallbacks, leases } = groupOver();
    // The turn's own bound (the gate's, a minute here) is never reached: the wait's timer is what ends it.
    const turn = group.turn(["q1"]);
    await settle();
    expect(sent).toHaveLength(1);
    clock.runAll();
    expect(await turn).toEqual({ poll: true, othersWaitFor: [] });
    expect(fallbacks).toEqual(["slow_redis"]);
    // The next poll does not wait either, nor pile a second command on the node that does not answer.
    expect(await group.turn(["q1"])).toEqual({ poll: true, othersWaitFor: [] });
    expect(sent).toHaveLength(1);
    expect(fallbacks).toEqual(["slow_redis", "slow_redis"]);
    // Redis answers at last: the lease it granted is this replica's, and the next turn asks again.
    sent[0]?.answer({ holds: true, others: [] });
    await settle();
    expect(group.isHolding).toBe(true);
    expect(leases).toEqual(["acquired"]);
    const next = group.turn(["q1"]);
    await settle();
    expect(sent).toHaveLength(2);
    sent[1]?.answer({ holds: true, others: ["q9"] });
    expect(await next).toEqual({ poll: true, othersWaitFor: ["q9"] });
  });

  it("takes an answer that came in while the process was busy past the wait", async () => {
    const { group, sent, clock, fallbacks } = groupOver();
    const turn = group.turn(["q1"]);
    await settle();
    // The answer is there when the wait's timer fires in the same turn of the event loop.
    sent[0]?.answer({ holds: true, others: [] });
    clock.runAll();
    expect(await turn).toEqual({ poll: true, othersWaitFor: [] });
    expect(group.isHolding).toBe(true);
    expect(fallbacks).toEqual([]);
  });

  it("hands over at once a lease Redis grants after the group left", async () => {
    const { group, sent, clock, leases } = groupOver();
    const turn = group.turn(["q1"]);
    await settle();
    clock.runAll();
    await turn;
    group.leave();
    sent[0]?.answer({ holds: true, others: [] });
    await settle();
    expect(group.isHolding).toBe(false);
    expect(leases).toEqual([]);
    // The release, on the lease's key.
    expect(sent.map((command) => command.key)).toEqual(["{h:acme}:lease", "{h:acme}:lease"]);
  });
});
