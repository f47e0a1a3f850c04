import { describe, expect, it } from "vitest";
import type { CitedSource } from "../../../../src/core/source-record.js";
import { QueryFailedError } from "../../../../src/errors/adapter-error.js";
import { metaOf } from "../../../../src/dialects/responses/response-meta.js";
import { responseOf } from "../../../../src/dialects/responses/response-of.js";
import { responseRequestSchema } from "../../../../src/dialects/responses/response-request.js";
import { annotatorOf } from "../../../../src/dialects/responses/response-annotations.js";
import { applyEvent, fileIdOf, newResponseState } from "../../../../src/dialects/responses/response-state.js";

const meta = metaOf("resp_abc", responseRequestSchema({ maxMessages: 10 }).parse({ model: "reason", input: "Leave?" }), 1, null);
const handbook: CitedSource = { filename: "handbook.pdf", title: "Leave", page: 4, snippet: "25 days", cited: true };
const links = { template: null, documentPage: null, workspace: "acme" };
const asFiles = annotatorOf({ format: "file_citation", links });
const asUrls = annotatorOf({ format: "url_citation", links });
const cited = { type: "cited", choice: 0, citations: [{ source: 0, filename: "handbook.pdf", start: 16, end: 19 }], sources: [handbook] } as const;

describe("a response's state", () => {
  it("opens the reasoning item before the message, and leaves out steps that come after the text began", () => {
    const state = newResponseState();
    applyEvent(state, { type: "reasoning", choice: 0, text: "Searching", steps: ["Searching"] }, asUrls);
    applyEvent(state, { type: "text", choice: 0, text: "You get " }, asUrls);
    applyEvent(state, { type: "reasoning", choice: 0, text: "\n\nLate", steps: ["Late"] }, asUrls);
    applyEvent(state, { type: "text", choice: 0, text: "25 days [1]." }, asUrls);
    expect(state).toMatchObject({ reasoning: "Searching", text: "You get 25 days [1].", order: ["reasoning", "message"], messageDone: false });
  });

  it("turns citations into url_citation annotations spanning the marker, with the source's link and title, and completes the message", () => {
    const state = newResponseState();
    applyEvent(state, { type: "text", choice: 0, text: "You get 25 days [1]." }, asUrls);
    applyEvent(state, { ...cited, citations: [...cited.citations], sources: [...cited.sources] }, asUrls);
    expect(state.annotations).toEqual([{ type: "url_citation", url: "urn:workspace-document:acme:handbook.pdf#page=4", title: "Leave", start_index: 16, end_index: 19 }]);
    expect(state).toMatchObject({ messageDone: true, order: ["message"], sources: [handbook] });
  });

  it("links through the deployment's template or the document page, as chat does", () => {
    const template = annotatorOf({ format: "url_citation", links: { ...links, template: "https://docs.example.com/{workspace}/{filename}#page={page}" } });
    expect(template([...cited.citations], [handbook])[0]).toMatchObject({ url: "https://docs.example.com/acme/handbook.pdf#page=4" });
    const page = annotatorOf({ format: "url_citation", links: { ...links, documentPage: "http://127.0.0.1:8000" } });
    expect(page([...cited.citations], [handbook])[0]).toMatchObject({ url: "http://127.0.0.1:8000/documents/acme/handbook.pdf?page=4&quote=25+days#cited" });
  });

  it("turns citations into file_citation annotations at the marker's start when asked, or none", () => {
    const state = newResponseState();
    applyEvent(state, { type: "text", choice: 0, text: "You get 25 days [1]." }, asFiles);
    applyEvent(state, { ...cited, citations: [...cited.citations], sources: [...cited.sources] }, asFiles);
    expect(state.annotations).toEqual([{ type: "file_citation", file_id: fileIdOf("handbook.pdf", handbook), filename: "handbook.pdf", index: 16, title: "Leave", page: 4, snippet: "25 days" }]);
    expect(annotatorOf({ format: "none", links })([...cited.citations], [handbook])).toEqual([]);
    // A response stored before the format was chosen was written with file_citation: it replays so.
    expect(annotatorOf(undefined)([...cited.citations], [handbook])[0]).toMatchObject({ type: "file_citation" });
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
    applyEvent(state, { type: "text", choice: 0, text: "25 days" }, asUrls);
    expect(responseOf(meta, null, null)).toMatchObject({ id: "resp_abc", status: "in_progress", output: [], completed_at: null, error: null, usage: null });
    const completed = responseOf(meta, state, { status: "completed", usage: { promptTokens: 3, completionTokens: 2, reasoningTokens: 1 }, at: 9 });
    expect(completed).toMatchObject({ status: "completed", completed_at: 9, usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5, output_tokens_details: { reasoning_tokens: 1 } } });
    expect(completed.output).toEqual([
      { type: "message", id: "msg_abc", status: "in_progress", role: "assistant", content: [{ type: "output_text", text: "25 days", annotations: [], logprobs: [] }], phase: "final_answer" },
    ]);
    const failed = responseOf(meta, state, { status: "failed", error: new QueryFailedError("The workspace failed"), at: 9 });
    expect(failed).toMatchObject({ status: "failed", completed_at: null, error: { code: "server_error", message: "The workspace failed" } });
    expect(failed.usage).toBeNull();
  });

  it("carries every field Open Responses requires: what the request sent, or the value that applied", () => {
    const sent = responseRequestSchema({ maxMessages: 10 }).parse({
      model: "ask",
      input: "Leave?",
      presence_penalty: 0.5,
      service_tier: "flex",
      prompt_cache_key: "k",
      tools: [{ type: "function", name: "lookup" }],
    });
    expect(responseOf(metaOf("resp_abc", sent, 1, null), null, null)).toMatchObject({
      presence_penalty: 0.5,
      frequency_penalty: 0,
      top_logprobs: 0,
      background: false,
      service_tier: "flex",
      max_tool_calls: null,
      safety_identifier: null,
      prompt_cache_key: "k",
      tools: [{ type: "function", name: "lookup", description: null, parameters: null, strict: null }],
    });
  });
});
