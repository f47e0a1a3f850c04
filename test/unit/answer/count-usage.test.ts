import { describe, expect, it } from "vitest";
import { countSoon, O200kTokenCounter, type TokenCounter } from "../../../src/tokens/token-counter.js";
import { countO200k } from "../../../src/tokens/count-o200k.js";
import { o200kRanks } from "../../../src/tokens/rank-table.js";
import { countUsage } from "../../../src/answer/count-usage.js";

const counter = new O200kTokenCounter();

describe("countUsage", () => {
  it("counts prompt, content and reasoning with o200k, reasoning inside completion tokens", async () => {
    const usage = await countUsage([{ prompt: "hello world", content: "hello world", reasoning: "hello" }], counter);
    expect(usage).toEqual({ promptTokens: 2, completionTokens: 3, reasoningTokens: 1 });
  });

  it("adds up choices and lets upstream numbers win", async () => {
    const usage = await countUsage([
      { prompt: "hello world", content: "hello", reasoning: "" },
      {
        prompt: "hello world",
        content: "ignored",
        reasoning: "",
        upstream: { prompt_tokens: 10, completion_tokens: 20 },
      },
    ], counter);
    expect(usage.promptTokens).toBe(12);
    expect(usage.completionTokens).toBe(21);
  });

  it("uses a prompt count made earlier instead of counting the prompt again", async () => {
    const usage = await countUsage([{ prompt: "not counted here", promptTokens: 7, content: "hello", reasoning: "" }], counter);
    expect(usage.promptTokens).toBe(7);
    expect(usage.completionTokens).toBe(1);
  });

  it("treats special-token text as plain text", async () => {
    expect(
      (await countUsage([{ prompt: "<|endoftext|>", content: "", reasoning: "" }], counter)).promptTokens,
    ).toBeGreaterThan(1);
  });
});

describe("O200kTokenCounter", () => {
  it("counts a long text in slices, letting the event loop turn between them, to the same total", async () => {
    const long = "Employees receive 25 days of paid annual leave per calendar year [1]. ".repeat(3000);
    const sliced = new O200kTokenCounter(o200kRanks(), 4096);
    let turns = 0;
    const ticking = setInterval(() => (turns += 1), 0);
    const immediates: number[] = [];
    const spin = () => {
      immediates.push(turns);
      if (immediates.length < 1000) setImmediate(spin);
    };
    setImmediate(spin);
    const [count, short] = await sliced.count([long, "hello world"]);
    clearInterval(ticking);
    const turnsDuringCount = immediates.length;
    expect(count).toBe(countO200k(o200kRanks(), long));
    expect(short).toBe(2);
    // 210 KB in 4 KB slices: the loop turned between slices (other callbacks ran meanwhile).
    expect(turnsDuringCount).toBeGreaterThanOrEqual(40);
  });

  it("counts short texts without giving up the event loop", async () => {
    let ran = false;
    setImmediate(() => (ran = true));
    expect(await counter.count(["hello world", "", "<|endoftext|>"])).toEqual([2, 0, countO200k(o200kRanks(), "<|endoftext|>")]);
    expect(ran).toBe(false);
  });
});

describe("countSoon", () => {
  it("counts on the next turn of the event loop, not while the caller is still sending", async () => {
    const calls: string[] = [];
    const spy: TokenCounter = {
      count: async (texts) => {
        calls.push(...texts);
        return counter.count(texts);
      },
      close: async () => {},
    };
    const counted = countSoon(spy, "hello world");
    expect(calls).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toEqual(["hello world"]);
    expect(await counted).toBe(2);
  });
});
