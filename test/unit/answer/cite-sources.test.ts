import { describe, expect, it } from "vitest";
import { citeSources } from "../../../src/answer/cite-sources.js";
import { codePointLength } from "../../../src/answer/code-points.js";

/** The text a citation spans, in code points, as a Python client would slice it. */
function spanned(content: string, citation: { start: number; end: number }): string {
  return [...content].slice(citation.start, citation.end).join("");
}

const handbook = { filename: "handbook.pdf", title: "Employee handbook", page: 4, snippet: "25 days" };
const policy = { filename: "policy.md", title: null, page: null, snippet: null };

describe("citeSources", () => {
  it("maps numbered markers to the references section closing the output", () => {
    const content =
      "Leave is 25 days [1]. Passwords need 14 characters [2].\n\nSources:\n[1] handbook.pdf, p. 4 — Employee handbook\n[2] security.md — Passwords";
    const { citations, sources } = citeSources(content, []);
    expect(
      citations.map((citation) => [citation.filename, spanned(content, citation)]),
    ).toEqual([
      ["handbook.pdf", "[1]"],
      ["security.md", "[2]"],
    ]);
    expect(sources).toEqual([
      { filename: "handbook.pdf", title: "Employee handbook", page: 4, snippet: null, cited: true },
      { filename: "security.md", title: "Passwords", page: null, snippet: null, cited: true },
    ]);
  });

  it("maps numbers to structured sources when there is no references section", () => {
    const content = "Leave is 25 days [2] and policies apply [1, 2].";
    const { citations, sources } = citeSources(content, [policy, handbook]);
    expect(
      citations.map((citation) => [citation.filename, spanned(content, citation)]),
    ).toEqual([
      ["handbook.pdf", "[2]"],
      ["policy.md", "[1, 2]"],
      ["handbook.pdf", "[1, 2]"],
    ]);
    expect(sources.map((source) => source.cited)).toEqual([true, true]);
  });

  it("marks listed sources that no marker points at as not cited", () => {
    const content = "Leave is 25 days [1].\n\nReferences:\n1. handbook.pdf, p. 4\n2. unused.docx";
    const { sources } = citeSources(content, []);
    expect(sources.map((source) => [source.filename, source.cited])).toEqual([
      ["handbook.pdf", true],
      ["unused.docx", false],
    ]);
  });

  it("reads footnote markers and ignores footnote definitions", () => {
    const content = "Leave is 25 days.[^1]\n\n[^1]: handbook.pdf, p. 4";
    const { citations } = citeSources(content, [handbook]);
    expect(citations).toHaveLength(1);
    expect(spanned(content, citations[0] as never)).toBe("[^1]");
    expect(citations[0]?.filename).toBe("handbook.pdf");
  });

  it("reads filename markers, with and without a page, and adds unknown documents as sources", () => {
    const content = "Leave is 25 days [handbook.pdf, p. 4]. Expenses take 30 days [expenses.txt].";
    const { citations, sources } = citeSources(content, [handbook]);
    expect(citations.map((citation) => spanned(content, citation))).toEqual([
      "[handbook.pdf, p. 4]",
      "[expenses.txt]",
    ]);
    expect(sources).toEqual([
      { ...handbook, cited: true },
      { filename: "expenses.txt", title: null, page: null, snippet: null, cited: true },
    ]);
  });

  it("reads lenticular markers as OpenAI file search writes them", () => {
    const content = "Leave is 25 days【4:0†handbook.pdf】.";
    const { citations } = citeSources(content, []);
    expect(citations).toHaveLength(1);
    expect(spanned(content, citations[0] as never)).toBe("【4:0†handbook.pdf】");
  });

  it("counts offsets in code points when astral characters come before the marker", () => {
    const content = "🎉 Leave 😀 is 25 days 𝒳 [1].\n\nSources:\n[1] handbook.pdf";
    const { citations } = citeSources(content, []);
    const citation = citations[0];
    expect(citation?.start).toBe([...content].indexOf("["));
    expect(content.indexOf("[")).toBeGreaterThan(citation?.start ?? 0); // UTF-16 would be off by 3
    expect(spanned(content, citation as never)).toBe("[1]");
  });

  it("shifts offsets by a prefix given in code points", () => {
    const prefix = "<think>\n😀\n</think>\n\n";
    const content = "Leave [1].\n\nSources:\n[1] handbook.pdf";
    const { citations } = citeSources(content, [], codePointLength(prefix));
    expect(spanned(prefix + content, citations[0] as never)).toBe("[1]");
  });

  it("leaves links, code, checkboxes, unknown numbers and non-documents alone", () => {
    const content =
      "See [the guide](https://example.com) and `items[1]`.\n```\nx = a[2]\n```\n- [x] done [7] [Node.js] [e.g.]\n\nSources:\n[1] handbook.pdf";
    expect(citeSources(content, []).citations).toEqual([]);
  });

  it("does not treat the references section's own numbers as citations", () => {
    const content = "Nothing cited here.\n\nSources:\n[1] handbook.pdf\n[2] policy.md";
    const { citations, sources } = citeSources(content, []);
    expect(citations).toEqual([]);
    expect(sources.every((source) => !source.cited)).toBe(true);
  });

  it("merges a structured source with the reference entry for the same document and page", () => {
    const content = "Leave is 25 days [1].\n\nSources:\n[1] handbook.pdf, p. 4";
    const { sources } = citeSources(content, [handbook]);
    expect(sources).toEqual([{ ...handbook, cited: true }]);
  });

  it("bounds numeric ranges", () => {
    const content = "All of them [1-9999].";
    const structured = Array.from({ length: 3 }, (_, index) => ({ ...policy, filename: `doc${index}.md` }));
    expect(citeSources(content, structured).citations).toHaveLength(3);
  });
});

describe("citeSources with several sections of one file", () => {
  it("keeps sections with different titles apart and merges entries that agree", () => {
    const content = "A [1]. B [2].\n\nSources:\n[1] README.md — Using it\n[2] README.md — Errors";
    const { sources, citations } = citeSources(content, [
      { filename: "README.md", title: null, page: null, snippet: "s" },
    ]);
    expect(sources.map((source) => [source.title, source.cited])).toEqual([
      ["Using it", true],
      ["Errors", true],
    ]);
    expect(citations).toHaveLength(2);
  });
});
