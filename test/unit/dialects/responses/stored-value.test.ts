import { describe, expect, it } from "vitest";
import { ResponseStreamEncoder } from "../../../../src/dialects/responses/response-stream-encoder.js";
import { metaOf } from "../../../../src/dialects/responses/response-meta.js";
import { responseRequestSchema } from "../../../../src/dialects/responses/response-request.js";
import { replay, storedValueSchema } from "../../../../src/dialects/responses/stored-value.js";
import { responsesErrors } from "../../../helpers/openai-schemas.js";
import { openResponsesErrors, openResponsesEventErrors } from "../../../helpers/open-responses-schemas.js";

// A response stored before the fields Open Responses requires existed (in Redis for
// RESPONSES_TTL_SECONDS, across an upgrade) reads back with them: retrieved, it validates against
// OpenAI's schemas, and against Open Responses' but for its citations, which stay as they were sent
// then (file_citation, which that specification does not have); replayed, they come out so too.

const USAGE = { promptTokens: 4, completionTokens: 3, reasoningTokens: 1 };
const handbook = { filename: "handbook.md", title: "Leave", page: null, snippet: null, cited: true };
const NEW_FIELDS = ["background", "presence_penalty", "frequency_penalty", "top_logprobs", "service_tier", "max_tool_calls", "safety_identifier", "prompt_cache_key"];

/** A stored value as this version writes it, then as the version before wrote it: without the new fields. */
function formerValue() {
  const body = responseRequestSchema({ maxMessages: 10 }).parse({ model: "ask", input: "How much leave?" });
  const meta = metaOf("resp_former", body, 1_700_000_000, null);
  const encoder = new ResponseStreamEncoder(meta, () => 1_700_000_001);
  encoder.open();
  encoder.encode({ type: "text", choice: 0, text: "You get 25 days [1]." });
  encoder.encode({ type: "cited", choice: 0, citations: [{ source: 0, filename: "handbook.md", start: 16, end: 19 }], sources: [handbook] });
  const [completed] = encoder.close(USAGE);
  const response = structuredClone((completed?.data as { response: Record<string, any> }).response);
  for (const field of NEW_FIELDS) delete response[field];
  delete response.output[0].phase;
  const former = { ...meta } as Record<string, unknown>;
  delete former.settings;
  delete former.citations;
  return JSON.parse(JSON.stringify({ response, input: [], meta: former, answer: encoder.answer, usage: USAGE })) as unknown;
}

describe("a response stored before Open Responses' fields", () => {
  it("reads back with every field the schemas require, its citations as they were sent", () => {
    const value = storedValueSchema.parse(formerValue());
    expect(responsesErrors("Response", value.response)).toEqual([]);
    const uncited = structuredClone(value.response);
    for (const item of uncited.output) if (item.type === "message") for (const part of item.content) part.annotations = [];
    expect(openResponsesErrors("ResponseResource", uncited)).toEqual([]);
    expect(value.response).toMatchObject({ background: false, service_tier: "default", prompt_cache_key: null, usage: { input_tokens: 4 } });
    const events = replay(value).map((frame) => frame.data as { type: string; annotation?: { type: string } });
    expect(events.find((event) => event.type === "response.output_text.annotation.added")?.annotation).toMatchObject({ type: "file_citation", filename: "handbook.md", index: 16 });
    for (const event of events.filter((candidate) => !JSON.stringify(candidate).includes("file_citation"))) {
      expect(openResponsesEventErrors(event), event.type).toEqual([]);
    }
  });
});
