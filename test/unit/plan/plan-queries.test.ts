import { describe, expect, it } from "vitest";
import { RequestValidationError } from "../../../src/errors/adapter-error.js";
import { planQueries } from "../../../src/plan/plan-queries.js";
import { withInstructions } from "../../../src/structured/instruction-block.js";

const ids = () => {
  let next = 0;
  return () => `q${(next += 1)}`;
};
const options = () => ({ modeField: "mode", newQueryId: ids() });

function issuesOf(run: () => unknown) {
  try {
    run();
  } catch (error) {
    if (error instanceof RequestValidationError) return error.issues;
    throw error;
  }
  throw new Error("expected a 422");
}

describe("planQueries", () => {
  it("plans one query per choice, each with a new id, the prompt and the mode", () => {
    const plan = planQueries({ prompt: "Leave?", mode: "reason", choices: 2 }, options());
    expect(plan).toEqual({
      prompt: "Leave?",
      mode: "reason",
      continued: false,
      queries: [
        { index: 0, queryId: "q1", createBody: { content: "Leave?", id: "q1", mode: "reason" } },
        { index: 1, queryId: "q2", createBody: { content: "Leave?", id: "q2", mode: "reason" } },
      ],
    });
  });

  it("adds the instruction block of a structured answer to the question: the content sent, and the prompt counted", () => {
    const structured = { kind: "json_object", name: null, description: null, schema: null, param: "response_format" } as const;
    const plan = planQueries({ prompt: "Leave?", mode: "ask", choices: 1, structured }, options());
    expect(plan.prompt).toBe(withInstructions("Leave?", structured));
    expect(plan.queries[0]?.createBody.content).toBe(plan.prompt);
  });

  it("continues an existing query, and merges extra create fields under the configured mode field", () => {
    const plan = planQueries(
      { prompt: "And then?", mode: "ask", choices: 1, continueQueryId: "known", createFields: { follow_up: true } },
      { modeField: "interaction_mode", newQueryId: ids() },
    );
    expect(plan.continued).toBe(true);
    expect(plan.queries).toEqual([
      { index: 0, queryId: "known", createBody: { follow_up: true, content: "And then?", id: "known", interaction_mode: "ask" } },
    ]);
  });

  it("refuses several choices on a continued query, at the dialect's location", () => {
    const issues = issuesOf(() =>
      planQueries({ prompt: "x", mode: "ask", choices: 2, continueQueryId: "known", from: { choices: ["body", "n"], createFields: ["body", "query"] } }, options()),
    );
    expect(issues).toEqual([expect.objectContaining({ loc: ["body", "n"], type: "value_error", input: 2 })]);
  });

  it("refuses create fields the adapter sets itself, every one, rather than overwriting them", () => {
    const issues = issuesOf(() =>
      planQueries({ prompt: "x", mode: "ask", choices: 1, createFields: { id: "mine", content: "other", mode: "build", keep: 1 } }, options()),
    );
    expect(issues.map((issue) => issue.loc)).toEqual([
      ["body", "query", "content"],
      ["body", "query", "id"],
      ["body", "query", "mode"],
    ]);
    expect(issues[0]?.msg).toMatch(/remove it from 'query'/);
  });

  it("passes only the allowed create fields when given, refusing every other by name (a shared credential)", () => {
    const allowed = { ...options(), allowedCreateFields: new Set(["follow_up"]) };
    const plan = planQueries({ prompt: "x", mode: "ask", choices: 1, createFields: { follow_up: true } }, allowed);
    expect(plan.queries[0]?.createBody).toEqual({ follow_up: true, content: "x", id: "q1", mode: "ask" });
    const issues = issuesOf(() => planQueries({ prompt: "x", mode: "ask", choices: 1, createFields: { follow_up: true, artifacts: {}, tool_results: [] } }, allowed));
    expect(issues.map((issue) => [issue.loc, issue.type])).toEqual([
      [["body", "query", "artifacts"], "extra_forbidden"],
      [["body", "query", "tool_results"], "extra_forbidden"],
    ]);
    expect(issues[0]?.msg).toMatch(/passes only these create fields: 'follow_up'/);
    const none = issuesOf(() => planQueries({ prompt: "x", mode: "ask", choices: 1, createFields: { follow_up: true } }, { ...options(), allowedCreateFields: new Set() }));
    expect(none[0]?.msg).toMatch(/create fields: none$/);
  });
});
