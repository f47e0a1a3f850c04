import { describe, expect, it } from "vitest";
import { inlineTokenCounter, WorkerTokenCounter } from "../../src/tokens/token-counter.js";
import { countUsage } from "../../src/translate/count-usage.js";

describe("countUsage", () => {
  it("counts prompt, content and reasoning with o200k, reasoning inside completion tokens", async () => {
    const usage = await countUsage([{ prompt: "hello world", content: "hello world", reasoning: "hello" }], inlineTokenCounter);
    expect(usage).toEqual({
      prompt_tokens: 2,
      completion_tokens: 3,
      total_tokens: 5,
      completion_tokens_details: { reasoning_tokens: 1 },
    });
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
    ], inlineTokenCounter);
    expect(usage.prompt_tokens).toBe(12);
    expect(usage.completion_tokens).toBe(21);
    expect(usage.total_tokens).toBe(33);
  });

  it("treats special-token text as plain text", async () => {
    expect(
      (await countUsage([{ prompt: "<|endoftext|>", content: "", reasoning: "" }], inlineTokenCounter)).prompt_tokens,
    ).toBeGreaterThan(1);
  });
});

describe("WorkerTokenCounter", () => {
  it("counts like the inline counter, off the event loop, and long texts do not block it", async () => {
    const counter = new WorkerTokenCounter();
    try {
      const long = "Employees receive 25 days of paid annual leave per calendar year [1]. ".repeat(3000);
      const texts = ["hello world", long, "", "<|endoftext|>"];
      expect(await counter.count(texts)).toEqual(await inlineTokenCounter.count(texts));
      let longestGap = 0;
      let last = performance.now();
      const ticker = setInterval(() => {
        const now = performance.now();
        longestGap = Math.max(longestGap, now - last);
        last = now;
      }, 1);
      await new Promise((resolve) => setTimeout(resolve, 10));
      last = performance.now();
      await counter.count([long, long]);
      clearInterval(ticker);
      expect(longestGap).toBeLessThan(10);
    } finally {
      await counter.close();
    }
  });

  it("falls back to counting in this thread when the worker is gone", async () => {
    const counter = new WorkerTokenCounter();
    await counter.close();
    expect(await counter.count(["hello world ".repeat(100)])).toEqual(await inlineTokenCounter.count(["hello world ".repeat(100)]));
  });
});
