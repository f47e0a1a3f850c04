import { describe, expect, it } from "vitest";
import { mergeAsync } from "../../../src/util/merge-async.js";
import { waitFor } from "../../helpers/wait-for.js";

async function* timed(values: [string, number][]): AsyncGenerator<string> {
  for (const [value, delay] of values) {
    await new Promise((resolve) => setTimeout(resolve, delay));
    yield value;
  }
}

/** A source that yields what the test gives it, when the test gives it. */
function controlled() {
  const queue: string[] = [];
  let wake: (() => void) | null = null;
  let ended = false;
  async function* source(): AsyncGenerator<string> {
    while (true) {
      while (queue.length > 0) yield queue.shift() as string;
      if (ended) return;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  }
  return {
    source: source(),
    give(value: string) {
      queue.push(value);
      wake?.();
    },
    end() {
      ended = true;
      wake?.();
    },
  };
}

describe("mergeAsync", () => {
  it("interleaves sources as their values arrive, each in its own order", async () => {
    const seen: string[] = [];
    const [a, b] = [controlled(), controlled()];
    const merging = (async () => {
      for await (const { index, value } of mergeAsync([a.source, b.source])) seen.push(`${index}:${value}`);
    })();
    for (const [source, value] of [[a, "a1"], [b, "b1"], [b, "b2"], [a, "a2"]] as const) {
      source.give(value);
      await waitFor(() => seen.includes(`${source === a ? 0 : 1}:${value}`), value);
    }
    a.end();
    b.end();
    await merging;
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
    await waitFor(() => closed, "the endless source to be closed");
  });
});
