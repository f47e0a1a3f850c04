import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { ChunkDelta } from "../../../src/dialects/chat-completions/chat-completion.js";
import { buildMessage, type StepsOutput } from "../../../src/dialects/chat-completions/build-message.js";
import type { CitationStyle } from "../../../src/answer/sources-footer.js";
import { advanceChoice, finishChoice, newChoiceStream } from "../../../src/dialects/chat-completions/stream-choice.js";
import type { UpstreamQuery } from "../../../src/upstream/query-schemas.js";
import type { QuerySnapshot } from "../../../src/core/query-snapshot.js";
import { toQuerySnapshot } from "../../../src/upstream/to-query-snapshot.js";

const snapshots = (JSON.parse(readFileSync(new URL("../../fixtures/queries/leave-policy.snapshots.json", import.meta.url), "utf8")) as UpstreamQuery[]).map(
  toQuerySnapshot,
);

function play(sequence: QuerySnapshot[], stepsOutput: StepsOutput, citationStyle: CitationStyle = "annotations"): ChunkDelta[] {
  const state = newChoiceStream();
  const deltas: ChunkDelta[] = [];
  for (const snapshot of sequence) {
    deltas.push(...(snapshot.status === "PROCESSED" ? finishChoice(state, snapshot, { stepsOutput, citationStyle }) : advanceChoice(state, snapshot, stepsOutput)));
  }
  return deltas;
}

function joined(deltas: ChunkDelta[]) {
  return {
    content: deltas.map((delta) => delta.content ?? "").join(""),
    reasoning: deltas.map((delta) => delta.reasoning_content ?? "").join(""),
    last: deltas.at(-1),
  };
}

describe("stream translation of a recorded query", () => {
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
    const state = newChoiceStream();
    const deltas = advanceChoice(state, half, "reasoning");
    const content = deltas.map((delta) => delta.content ?? "").join("");
    expect(content).toBe("Employees ");
    const rest = advanceChoice(state, { ...half, output: "Employees 🏖 ok" }, "reasoning");
    expect(rest.at(-1)?.content).toBe("🏖 ok");
  });

  it("holds back output the upstream rewrote, and cites over what was actually sent", () => {
    const state = newChoiceStream();
    advanceChoice(state, { ...(snapshots[3] as QuerySnapshot), output: "Draft [1]" }, "reasoning");
    const rewritten = { ...(snapshots[5] as QuerySnapshot), output: "Final answer [1].\n\nSources:\n[1] handbook.md" };
    const deltas = finishChoice(state, rewritten, { stepsOutput: "reasoning", citationStyle: "annotations" });
    expect(deltas.some((delta) => delta.content)).toBe(false);
    expect(state.output).toBe("Draft [1]");
  });
});
