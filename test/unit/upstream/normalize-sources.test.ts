import { describe, expect, it } from "vitest";
import { normalizeSources, sourcesIn } from "../../../src/upstream/normalize-sources.js";

describe("normalizeSources", () => {
  it("reads the interface's fields and common aliases", () => {
    expect(
      normalizeSources([
        { filename: "a.pdf", title: "A", page: 3, snippet: "x" },
        { file_name: "b.pdf", page_number: "7", text: "y" },
        { metadata: { source: "c.md", page_label: 2 }, content: "z" },
        { url: "https://host/files/d%20e.pdf", name: "D" },
        "f.txt",
      ]),
    ).toEqual([
      { filename: "a.pdf", title: "A", page: 3, snippet: "x" },
      { filename: "b.pdf", title: null, page: 7, snippet: "y" },
      { filename: "c.md", title: null, page: 2, snippet: "z" },
      { filename: "d e.pdf", title: "D", page: null, snippet: null },
      { filename: "f.txt", title: null, page: null, snippet: null },
    ]);
  });

  it("skips what it cannot read instead of failing", () => {
    expect(normalizeSources([null, 3, { page: 2 }, [], { filename: "" }])).toEqual([]);
    expect(normalizeSources({ not: "an array" })).toEqual([]);
  });

  it("finds sources under the keys a query, item or step may use", () => {
    expect(sourcesIn({ tool: "search", citations: [{ filename: "a.pdf" }] })).toHaveLength(1);
    expect(sourcesIn("text")).toEqual([]);
  });
});
