import { describe, expect, it } from "vitest";
import { messageFrom as buildMessage } from "../../helpers/chat-encoding.js";
import { sourcesFooter } from "../../../src/answer/sources-footer.js";
import type { QuerySnapshot } from "../../../src/core/query-snapshot.js";

const snapshot = (output: string): QuerySnapshot => ({
  id: "q",
  status: "PROCESSED",
  output,
  steps: [],
  sources: [
    { filename: "handbook.pdf", title: "Employee handbook", page: 4, snippet: null },
    { filename: "policy.md", title: null, page: null, snippet: null },
  ],
  usage: undefined,
});

describe("the Markdown sources footer", () => {
  it("lists the cited sources with filename, page and title, after the output", () => {
    const message = buildMessage(snapshot("Leave is 25 days [1]."), { stepsOutput: "none", citationStyle: "markdown" });
    expect(message.content).toBe("Leave is 25 days [1].\n\n**Sources**\n- handbook.pdf, p. 4 — Employee handbook");
    // Annotations still span the marker.
    const annotation = message.annotations[0];
    expect(annotation?.type).toBe("file_citation");
    if (annotation?.type !== "file_citation") return;
    expect([...(message.content ?? "")].slice(annotation.start_index ?? 0, annotation.end_index ?? 0).join("")).toBe("[1]");
  });

  it("lists every source when none is cited, and nothing when the output has its own references", () => {
    const listed = buildMessage(snapshot("No markers here."), { stepsOutput: "none", citationStyle: "markdown" });
    expect(listed.content).toContain("- policy.md");
    const own = snapshot("Leave [1].\n\nSources:\n[1] handbook.pdf, p. 4");
    expect(buildMessage(own, { stepsOutput: "none", citationStyle: "markdown" }).content).toBe(own.output);
  });

  it("is off with the annotations style and without sources", () => {
    expect(buildMessage(snapshot("Leave [1]."), { stepsOutput: "none", citationStyle: "annotations" }).content).toBe("Leave [1].");
    expect(sourcesFooter("text", [], "markdown")).toBe("");
  });
});
