import { describe, expect, it } from "vitest";
import type { CitedSource } from "../../../../src/core/source-record.js";
import { QueryFailedError } from "../../../../src/errors/adapter-error.js";
import { metaOf } from "../../../../src/dialects/responses/response-meta.js";
import { responseOf } from "../../../../src/dialects/responses/response-of.js";
import { responseRequestSchema } from "../../../../src/dialects/responses/response-request.js";
import { applyEvent, fileIdOf, newResponseState } from "../../../../src/dialects/responses/response-state.js";

const meta = metaOf("resp_abc", responseRequestSchema({ maxMessages: 10 }).parse({ model: "reason", input: "Leave?" }), 1, null);
const handbook: CitedSource = { filename: "handbook.pdf", title: "Leave", page: 4, snippet: "25 days", cited: true };

describe("a response's state", () => {
  it("opens the reasoning item before the message, and leaves out steps that come after the text began", () => {
    const state = newResponseState();
    applyEvent(state, { type: "reasoning", choice: 0, text: "Searching", steps: ["Searching"] });
    applyEvent(state, { type: "text", choice: 0, text: "You get " });
    applyEvent(state, { type: "reasoning", choice: 0, text: "\n\nLate", steps: ["Late"] });
    applyEvent(state, { type: "text", choice: 0, text: "25 days [1]." });
    expect(state).toMatchObject({ reasoning: "Searching", text: "You get 25 days [1].", order: ["reasoning", "message"], messageDone: false });
  });

  it("turns citations into file_citation annotations at the marker's start, and completes the message", () => {
    const state = newResponseState();
    applyEvent(state, { type: "text", choice: 0, text: "You get 25 days [1]." });
    applyEvent(state, { type: "cited", choice: 0, citations: [{ source: 0, filename: "handbook.pdf", start: 16, end: 19 }], sources: [handbook] });
    expect(state.annotations).toEqual([{ type: "file_citation", file_id: fileIdOf("handbook.pdf", handbook), filename: "handbook.pdf", index: 16, title: "Leave", page: 4, snippet: "25 days" }]);
    expect(state).toMatchObject({ messageDone: true, order: ["message"], sources: [handbook] });
  });

  it("gives a source the same file id in every response, and two pages of one file two ids", () => {
    expect(fileIdOf("Handbook.pdf", handbook)).toBe(fileIdOf("handbook.pdf", handbook));
    expect(fileIdOf("handbook.pdf", { ...handbook, page: 5 })).not.toBe(fileIdOf("handbook.pdf", handbook));
    expect(fileIdOf("handbook.pdf", handbook)).toMatch(/^file-[0-9a-f]{24}$/);
  });
});

describe("the response object", () => {
  it("is in progress with what is known, then completed with its usage, or failed with its error", () => {
    const state = newResponseState();
    applyEvent(state, { type: "text", choice: 0, text: "25 days" });
    expect(responseOf(meta, null, null)).toMatchObject({ id: "resp_abc", status: "in_progress", output: [], completed_at: null, error: null });
    const completed = responseOf(meta, state, { status: "completed", usage: { promptTokens: 3, completionTokens: 2, reasoningTokens: 1 }, at: 9 });
    expect(completed).toMatchObject({ status: "completed", completed_at: 9, usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5, output_tokens_details: { reasoning_tokens: 1 } } });
    expect(completed.output).toEqual([{ type: "message", id: "msg_abc", status: "in_progress", role: "assistant", content: [{ type: "output_text", text: "25 days", annotations: [], logprobs: [] }] }]);
    const failed = responseOf(meta, state, { status: "failed", error: new QueryFailedError("The workspace failed"), at: 9 });
    expect(failed).toMatchObject({ status: "failed", completed_at: null, error: { code: "server_error", message: "The workspace failed" } });
    expect(failed).not.toHaveProperty("usage");
  });
});
