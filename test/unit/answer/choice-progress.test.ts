import { describe, expect, it } from "vitest";
import { advance, advanceSteps, finish, newProgress } from "../../../src/answer/choice-progress.js";
import { snapshot } from "../../helpers/snapshots.js";

describe("the events of one choice", () => {
  it("give every new step one by one beside the rendered reasoning text", () => {
    const progress = newProgress(0);
    const events = advance(progress, snapshot("PROCESSING", "", [{ text: "Looking." }, { tool: "search_documents" }]));
    expect(events).toEqual([{ type: "reasoning", choice: 0, text: "Looking.\n\nUsing tool: search_documents", steps: ["Looking.", "Using tool: search_documents"] }]);
    expect(advance(progress, snapshot("PROCESSING", "", [{ text: "Looking." }, { tool: "search_documents" }, { text: "Found." }]))).toEqual([
      { type: "reasoning", choice: 0, text: "\n\nFound.", steps: ["Found."] },
    ]);
  });

  it("report steps as they come but hold the output for the end when following steps only", () => {
    const progress = newProgress(0);
    expect(advanceSteps(progress, snapshot("PROCESSING", "Half an ans", [{ text: "Looking." }]))).toEqual([
      { type: "reasoning", choice: 0, text: "Looking.", steps: ["Looking."] },
    ]);
    expect(advanceSteps(progress, snapshot("PROCESSING", "Half an answer, rewritten", [{ text: "Looking." }]))).toEqual([]);
    const end = finish(progress, snapshot("PROCESSED", "The whole answer [1].", [{ text: "Looking." }, { text: "Done." }]));
    expect(end.map((event) => event.type)).toEqual(["reasoning", "text", "cited", "finished"]);
    expect(end[1]).toEqual({ type: "text", choice: 0, text: "The whole answer [1]." });
  });
});
