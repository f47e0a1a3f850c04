import { describe, expect, it } from "vitest";
import { parseReferences, parseReferenceText } from "../../src/translate/parse-references.js";

describe("parseReferences", () => {
  it("finds a closing section under a Markdown heading with bullet entries", () => {
    const output =
      "Answer [1].\n\n## References\n- [1] handbook.pdf, p. 4 — Employee handbook\n- [2] policy.md";
    const section = parseReferences(output);
    expect(section?.start).toBe(output.indexOf("## References"));
    expect(section?.entries.map((entry) => entry.number)).toEqual([1, 2]);
  });

  it("numbers unnumbered entries by position", () => {
    const section = parseReferences("Answer.\n\n**Sources:**\n- handbook.pdf\n- policy.md");
    expect(section?.entries.map((entry) => [entry.number, entry.source.filename])).toEqual([
      [1, "handbook.pdf"],
      [2, "policy.md"],
    ]);
  });

  it("does not take a heading that is followed by prose as a references section", () => {
    expect(parseReferences("Sources:\n\nThe sources of truth are many.\n\nSee above.")).toBeNull();
    expect(parseReferences("Answer with no list at all.")).toBeNull();
    expect(parseReferences("Answer.\n\nSources:\n")).toBeNull();
  });
});

describe("parseReferenceText", () => {
  it.each([
    [
      "handbook.pdf, p. 4 — Employee handbook",
      { filename: "handbook.pdf", page: 4, title: "Employee handbook" },
    ],
    ["handbook.pdf (page 12)", { filename: "handbook.pdf", page: 12, title: null }],
    [
      "reports/q3 report.docx - Q3 numbers",
      { filename: "reports/q3 report.docx", page: null, title: "Q3 numbers" },
    ],
    ["Employee handbook", { filename: null, page: null, title: "Employee handbook" }],
    [
      "[Employee handbook](https://files.example.com/docs/handbook.pdf)",
      { filename: "handbook.pdf", page: null, title: "Employee handbook" },
    ],
  ])("reads %s", (text, expected) => {
    expect(parseReferenceText(text)).toMatchObject(expected);
  });
});
