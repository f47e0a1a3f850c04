import { describe, expect, it } from "vitest";
import { mergeAsync } from "../../../src/util/merge-async.js";

async function* timed(values: [string, number][]): AsyncGenerator<string> {
  for (const [value, delay] of values) {
    await new Promise((resolve) => setTimeout(resolve, delay));
    yield value;
  }
}

describe("mergeAsync", () => {
  it("interleaves sources as their values arrive, each in its own order", async () => {
    const seen: string[] = [];
    for await (const { index, value } of mergeAsync([timed([["a1", 5], ["a2", 30]]), timed([["b1", 15], ["b2", 5]])])) {
      seen.push(`${index}:${value}`);
    }
    expect(seen).toEqual(["0:a1", "1:b1", "1:b2", "0:a2"]);
  });

  it("passes one source straight through", async () => {
    const seen: string[] = [];
    for await (const { index, value } of mergeAsync([timed([["x", 1], ["y", 1]])])) seen.push(`${index}:${value}`);
    expect(seen).toEqual(["0:x", "0:y"]);
  });

  it("asks the other sources to stop when one throws", async () => {
    let closed = false;
    async function* endless(): AsyncGenerator<string> {
      try {
        while (true) {
          await new Promise((resolve) => setTimeout(resolve, 5));
          yield "tick";
        }
      } finally {
        closed = true;
      }
    }
    async function* failing(): AsyncGenerator<string> {
      await new Promise((resolve) => setTimeout(resolve, 12));
      if (Date.now() > 0) throw new Error("boom");
      yield "never";
    }
    await expect(
      (async () => {
        for await (const _ of mergeAsync([endless(), failing()])) {
          // consume
        }
      })(),
    ).rejects.toThrow("boom");
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(closed).toBe(true);
  });
});
