import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { ChunkDelta } from "../../../../src/dialects/chat-completions/chat-completion.js";
import type { StepsOutput } from "../../../../src/dialects/chat-completions/chat-choice.js";
import type { CitationStyle } from "../../../../src/answer/sources-footer.js";
import { advance, finish, newProgress } from "../../../../src/answer/choice-progress.js";
import { deltasOf, messageFrom as buildMessage } from "../../../helpers/chat-encoding.js";
import type { UpstreamQuery } from "../../../../src/upstream/query-schemas.js";
import type { QuerySnapshot } from "../../../../src/core/query-snapshot.js";
import { toQuerySnapshot } from "../../../../src/upstream/to-query-snapshot.js";

const snapshots = (JSON.parse(readFileSync(new URL("../../../fixtures/queries/leave-policy.snapshots.json", import.meta.url), "utf8")) as UpstreamQuery[]).map(
  toQuerySnapshot,
);

function play(sequence: QuerySnapshot[], stepsOutput: StepsOutput, citationStyle: CitationStyle = "annotations"): ChunkDelta[] {
  return deltasOf(sequence, { stepsOutput, citationStyle });
}

function joined(deltas: ChunkDelta[]) {
  return {
    content: deltas.map((delta) => delta.content ?? "").join(""),
    reasoning: deltas.map((delta) => delta.reasoning_content ?? "").join(""),
    last: deltas.at(-1),
  };
}

describe("chat encoding of a recorded query", () => {
  it.each([
    ["reasoning", "annotations"],
    ["content", "annotations"],
    ["none", "annotations"],
    ["reasoning", "markdown"],
    ["content", "markdown"],
  ] as const)("concatenates to the non-streamed message with steps as %s and citations as %s", (stepsOutput, citationStyle) => {
    const final = snapshots.at(-1) as QuerySnapshot;
    const message = buildMessage(final, { stepsOutput, citationStyle });
    const result = joined(play(snapshots, stepsOutput, citationStyle));
    expect(result.content).toBe(message.content);
    expect(result.reasoning).toBe(message.reasoning_content ?? "");
    expect(result.last).toEqual({ annotations: message.annotations, sources: message.sources });
  });

  it("sends steps and output growth as separate deltas, as they appear", () => {
    const deltas = play(snapshots, "reasoning");
    expect(deltas.map((delta) => Object.keys(delta).join("+"))).toEqual([
      "reasoning_content",
      "reasoning_content",
      "reasoning_content",
      "content",
      "content",
      "content",
      "annotations+sources",
    ]);
  });

  it("never sends half of a surrogate pair", () => {
    const half = { ...(snapshots[3] as QuerySnapshot), output: "Employees 🏖".slice(0, -1) };
    const progress = newProgress(0);
    const text = (events: ReturnType<typeof advance>) => events.map((event) => (event.type === "text" ? event.text : "")).join("");
    expect(text(advance(progress, half))).toBe("Employees ");
    expect(text(advance(progress, { ...half, output: "Employees 🏖 ok" }))).toBe("🏖 ok");
  });

  it("holds back output the upstream rewrote, and cites over what was actually sent", () => {
    const progress = newProgress(0);
    advance(progress, { ...(snapshots[3] as QuerySnapshot), output: "Draft [1]" });
    const rewritten = {
      ...(snapshots[5] as QuerySnapshot),
      output: "Final answer [1].",
      sources: [{ filename: "handbook.md", title: null, page: null, snippet: null }],
    };
    const events = finish(progress, rewritten);
    expect(events.some((event) => event.type === "text")).toBe(false);
    expect(progress.text).toBe("Draft [1]");
    const cited = events.find((event) => event.type === "cited");
    expect(cited?.type === "cited" && cited.citations.map((citation) => [citation.start, citation.end])).toEqual([[6, 9]]);
  });
});
