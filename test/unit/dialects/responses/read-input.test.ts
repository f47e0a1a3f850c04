import { describe, expect, it } from "vitest";
import { readConversation, readInput } from "../../../../src/dialects/responses/read-input.js";
import { toolResultsPrompt } from "../../../../src/dialects/responses/tool-results.js";
import { InvalidRequestError, RequestValidationError } from "../../../../src/errors/adapter-error.js";

// What a Responses input asks (docs/responses-api.md#a-tools-result-handed-back): a question, or
// the results of tools handed back after it.

const call = { type: "function_call", call_id: "call_1", name: "lookup", arguments: '{"topic":"leave"}' };

describe("reading a Responses input", () => {
  it("asks the last user message, tool outputs before it being history", () => {
    const input = readInput([call, { type: "function_call_output", call_id: "call_1", output: "x" }, { role: "user", content: "And carry-over?" }], "resp_a");
    expect(input.turn).toEqual({ kind: "question", text: "And carry-over?" });
    expect(input.calls.get("call_1")).toEqual({ name: "lookup", arguments: '{"topic":"leave"}' });
  });

  it("hands back the tool outputs after the last user message, as text (a string, or the text parts)", () => {
    const input = readInput(
      [
        { role: "user", content: "How much leave?" },
        call,
        { type: "function_call_output", call_id: "call_1", output: [{ type: "input_text", text: "25" }, { type: "input_image", image_url: "x" }, { type: "input_text", text: "days" }] },
      ],
      "resp_a",
    );
    expect(input.turn).toEqual({ kind: "tool_results", outputs: [{ callId: "call_1", output: "25\ndays", index: 2 }], question: "How much leave?" });
  });

  it("refuses an input with neither a question nor a tool's result (422), and reads a conversation without one", () => {
    const input = [{ role: "assistant", content: "Hello" }];
    expect(() => readInput(input, "resp_a")).toThrow(RequestValidationError);
    expect(readConversation(input, "resp_a")).toMatchObject({ question: null, outputs: [], messages: [{ role: "assistant", text: "Hello" }] });
  });

  it("collects the compactions' content and keeps an assistant message's phase in its listed item", () => {
    const input = readInput(
      [{ type: "compaction", encrypted_content: "wst_x" }, { role: "assistant", phase: "commentary", content: "Checking." }, { role: "user", content: "Go on." }],
      "resp_a",
    );
    expect(input.compactions).toEqual(["wst_x"]);
    expect(input.items[1]).toMatchObject({ role: "assistant", phase: "commentary" });
  });
});

describe("the prompt of a tool's result", () => {
  const outputs = [{ callId: "call_1", output: "25 days", index: 1 }];
  const calls = new Map([["call_1", { name: "lookup", arguments: '{"topic":"leave"}' }]]);

  it("names the function, its arguments and its output; a new query gets the question first", () => {
    const block = 'The function lookup was called with {"topic":"leave"} and returned:\n25 days';
    expect(toolResultsPrompt(outputs, calls, "How much leave?", true)).toBe(block);
    expect(toolResultsPrompt(outputs, calls, "How much leave?", false)).toBe(`How much leave?\n\n${block}`);
    const two = [...outputs, { callId: "call_1", output: "again", index: 2 }];
    expect(toolResultsPrompt(two, calls, null, false).split("\n\n")).toHaveLength(2);
  });

  it("refuses an output whose call is nowhere (400)", () => {
    expect(() => toolResultsPrompt([{ callId: "call_9", output: "", index: 0 }], calls, null, true)).toThrow(InvalidRequestError);
  });
});
