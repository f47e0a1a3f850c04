import { describe, expect, it } from "vitest";
import { NodeHealth } from "../../../src/redis/node-health.js";

/** Sends one command to `node` and fails it at once: one bound without an answer. */
function failOne(health: NodeHealth, node: string): boolean {
  return health.failed(node, health.send());
}

describe("NodeHealth", () => {
  it("counts a node as down after failures in a row, and says so once", () => {
    const health = new NodeHealth(2);
    expect(failOne(health, "a")).toBe(false);
    expect(health.isDown("a")).toBe(false);
    expect(failOne(health, "a")).toBe(true);
    expect(health.isDown("a")).toBe(true);
    expect(health.downNodes()).toEqual(["a"]);
    // A command still in flight that fails later changes nothing more.
    expect(failOne(health, "a")).toBe(false);
  });

  it("starts a node afresh when it answers, and says that a down node has recovered", () => {
    const health = new NodeHealth(2);
    failOne(health, "a");
    health.send();
    expect(health.answered("a")).toBe(false); // failing, not down
    expect(failOne(health, "a")).toBe(false); // the streak began again
    expect(failOne(health, "a")).toBe(true);
    expect(health.answered("a")).toBe(true);
    expect(health.isDown("a")).toBe(false);
  });

  it("counts commands that were in flight together and fail together as one failure", () => {
    const health = new NodeHealth(2);
    const first = health.send();
    const second = health.send();
    const third = health.send();
    expect([health.failed("a", first), health.failed("a", second), health.failed("a", third)]).toEqual([false, false, false]);
    expect(health.isDown("a")).toBe(false);
    // A command sent after that failure was seen is new evidence.
    expect(failOne(health, "a")).toBe(true);
  });

  it("does not count a command sent before the node last answered: the node is slow, not dead", () => {
    const health = new NodeHealth(2);
    failOne(health, "a");
    const slow = health.send();
    health.send();
    health.answered("a");
    expect(health.failed("a", slow)).toBe(false);
    expect(failOne(health, "a")).toBe(false);
    expect(health.isDown("a")).toBe(false);
  });

  it("takes a reply error as a sign of life for the commands sent before it, without ending the streak", () => {
    const health = new NodeHealth(2);
    failOne(health, "a");
    const inFlight = health.send();
    health.send();
    health.replied("a");
    expect(health.failed("a", inFlight)).toBe(false);
    expect(failOne(health, "a")).toBe(true);
  });

  it("keeps each node apart: another node's answer neither breaks a streak nor ends an outage", () => {
    const health = new NodeHealth(2);
    failOne(health, "a");
    health.send();
    health.answered("b");
    expect(failOne(health, "a")).toBe(true);
    expect(health.isDown("b")).toBe(false);
    expect(health.downNodes()).toEqual(["a"]);
  });

  it("forgets a node without an answer (its slots moved), or every node at once (the connection came back)", () => {
    const health = new NodeHealth(1);
    failOne(health, "a");
    failOne(health, "b");
    failOne(health, "c");
    expect(health.forget("a")).toBe(true);
    expect(health.forget("a")).toBe(false);
    expect(health.forgetAll().sort()).toEqual(["b", "c"]);
    expect(health.downNodes()).toEqual([]);
    // Forgetting is no answer: a command sent before it still counts when it fails.
    const before = health.send();
    health.forget("a");
    expect(health.failed("a", before)).toBe(true);
  });
});
