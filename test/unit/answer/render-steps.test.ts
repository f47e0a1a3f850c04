import { describe, expect, it } from "vitest";
import { renderNewSteps, renderSteps } from "../../../src/answer/render-steps.js";

describe("renderSteps", () => {
  const steps = [
    { text: "Looking." },
    { tool: "search_documents" },
    { tool: { name: "outline" } },
    { tool: {} },
    { other: 1 },
    { text: "Done." },
  ];

  it("renders text steps as messages and tool steps as one line naming the tool", () => {
    expect(renderSteps(steps)).toBe(
      "Looking.\n\nUsing tool: search_documents\n\nUsing tool: outline\n\nUsing tool: tool\n\nDone.",
    );
  });

  it("produces deltas that concatenate to the whole, however the steps arrive", () => {
    for (let split = 0; split <= steps.length; split += 1) {
      const joined = renderNewSteps(steps.slice(0, split), 0).text + renderNewSteps(steps, split).text;
      expect(joined).toBe(renderSteps(steps));
    }
  });

  it("renders each new step on its own, leaving out the ones that render as nothing", () => {
    expect(renderNewSteps(steps, 2).each).toEqual(["Using tool: outline", "Using tool: tool", "Done."]);
    expect(renderNewSteps(steps, steps.length).each).toEqual([]);
  });
});
