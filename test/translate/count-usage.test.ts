import { describe, expect, it } from "vitest";
import { countUsage } from "../../src/translate/count-usage.js";

describe("countUsage", () => {
  it("counts prompt, content and reasoning with o200k, reasoning inside completion tokens", () => {
    const usage = countUsage([{ prompt: "hello world", content: "hello world", reasoning: "hello" }]);
    expect(usage).toEqual({
      prompt_tokens: 2,
      completion_tokens: 3,
      total_tokens: 5,
      completion_tokens_details: { reasoning_tokens: 1 },
    });
  });

  it("adds up choices and lets upstream numbers win", () => {
    const usage = countUsage([
      { prompt: "hello world", content: "hello", reasoning: "" },
      {
        prompt: "hello world",
        content: "ignored",
        reasoning: "",
        upstream: { prompt_tokens: 10, completion_tokens: 20 },
      },
    ]);
    expect(usage.prompt_tokens).toBe(12);
    expect(usage.completion_tokens).toBe(21);
    expect(usage.total_tokens).toBe(33);
  });

  it("treats special-token text as plain text", () => {
    expect(
      countUsage([{ prompt: "<|endoftext|>", content: "", reasoning: "" }]).prompt_tokens,
    ).toBeGreaterThan(1);
  });
});
