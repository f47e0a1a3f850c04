import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { citeSources } from "../../../../src/answer/cite-sources.js";
import { sourceLinker } from "../../../../src/answer/source-links.js";
import { linkMarkers, newMarkerLinks, shifted } from "../../../../src/dialects/chat-completions/link-markers.js";

const linker = sourceLinker({ template: "https://docs.example.com/{filename}#page={page}", documentPage: undefined }, "acme");
const text = "Leave is 25 days [handbook.pdf, p. 4]. See [the policy](https://x/y) and `array[1]` or [notes.txt] 😀 [2].";

/** Feeds text in the given pieces and returns what came out, and the state. */
function feed(pieces: string[]) {
  const state = newMarkerLinks();
  const out = pieces.map((piece) => linkMarkers(state, piece, linker, false)).join("") + linkMarkers(state, "", linker, true);
  return { out, state };
}

describe("linkMarkers", () => {
  it("links markers that name a document, and leaves links, code and numbered markers alone", () => {
    const { out } = feed([text]);
    expect(out).toBe(
      "Leave is 25 days [handbook.pdf, p. 4](https://docs.example.com/handbook.pdf#page=4). See [the policy](https://x/y) and `array[1]` or " +
        "[notes.txt](https://docs.example.com/notes.txt#page=) 😀 [2].",
    );
  });

  it("gives the same text however the stream is cut, never sending a piece twice", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: text.length }), { maxLength: 12 }), (cuts) => {
        const points = [0, ...[...new Set(cuts)].sort((a, b) => a - b), text.length];
        const pieces = points.slice(1).map((end, index) => text.slice(points[index], end));
        expect(feed(pieces).out).toBe(feed([text]).out);
      }),
    );
  });

  it("moves citation spans past the links inserted before them", () => {
    const { out, state } = feed([text]);
    const { citations } = citeSources(text, [{ filename: "a.md", title: null, page: null, snippet: null }, { filename: "b.md", title: null, page: null, snippet: null }]);
    for (const citation of citations) {
      const marker = [...text].slice(citation.start, citation.end).join("");
      expect([...out].slice(shifted(citation.start, state.insertions), shifted(citation.end, state.insertions)).join("")).toBe(marker);
    }
    expect(citations.length).toBe(3);
  });

  it("gives up holding text after an unclosed bracket at a line break or past the longest marker", () => {
    const state = newMarkerLinks();
    expect(linkMarkers(state, "a [b", linker, false)).toBe("a ");
    expect(linkMarkers(state, "\nc", linker, false)).toBe("[b\nc");
    expect(linkMarkers(state, `[${"x".repeat(400)}`, linker, false)).toBe(`[${"x".repeat(400)}`);
  });
});
