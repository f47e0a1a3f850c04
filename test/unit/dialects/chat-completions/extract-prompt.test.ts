import { describe, expect, it } from "vitest";
import { RequestValidationError } from "../../../../src/errors/adapter-error.js";
import { extractPrompt } from "../../../../src/dialects/chat-completions/extract-prompt.js";

describe("extractPrompt", () => {
  it("takes the last user message, past later assistant and tool messages", () => {
    const result = extractPrompt([
      { role: "system", content: "Be brief." },
      { role: "user", content: "first" },
      { role: "assistant", content: "answer" },
      { role: "user", content: "second" },
      { role: "assistant", content: null },
    ]);
    expect(result).toEqual({ prompt: "second", messageIndex: 3 });
  });

  it("joins the text parts of array content in order and ignores other parts", () => {
    const result = extractPrompt([
      {
        role: "user",
        content: [
          { type: "text", text: "What does" },
          { type: "image_url", image_url: { url: "http://169.254.169.254/secret" } },
          { type: "text", text: "this say?" },
        ],
      },
    ]);
    expect(result.prompt).toBe("What does\nthis say?");
  });

  it("rejects a request without a user message, or whose last one has no text", () => {
    expect(() => extractPrompt([{ role: "system", content: "x" }])).toThrow(RequestValidationError);
    try {
      extractPrompt([
        { role: "user", content: "a" },
        { role: "user", content: [{ type: "image_url" }] },
      ]);
      expect.unreachable();
    } catch (error) {
      expect((error as RequestValidationError).issues[0]?.loc).toEqual(["body", "messages", 1, "content"]);
    }
    expect(() => extractPrompt([{ role: "user", content: "   " }])).toThrow(RequestValidationError);
  });
});
