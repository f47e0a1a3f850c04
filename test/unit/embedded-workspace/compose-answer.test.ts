import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { citeSources } from "../../../src/answer/cite-sources.js";
import { composeAnswer, type EmbeddedMode, markdownSafe, splitSentences } from "../../../src/embedded-workspace/compose-answer.js";
import { DocumentIndex, loadPassages, type Passage } from "../../../src/embedded-workspace/document-index.js";
import { defaultDocuments } from "../../../src/embedded-workspace/start-embedded-workspace.js";

/** The markers the answer itself wrote: unescaped brackets of the forms it uses, outside code, before its Sources list. */
function ownMarkers(output: string): string[] {
  const body = output.split("\n\nSources:\n")[0] as string;
  const outsideCode = body.replace(/`[^`\n]*`/g, (code) => " ".repeat(code.length));
  return [...outsideCode.matchAll(/(?<!\\)\[(\^\d+|\d+(?:, \d+)*|[^[\]\n]+\.(?:md|txt|pdf)(?:, p\. \d+)?)\](?!\()/g)].map((match) => match[0]);
}

/** Valid Markdown on its own terms: code spans and strong emphasis balanced, no bracket left open. */
function balanced(output: string): boolean {
  return output.split("\n").every((line) => {
    const backticks = line.match(/`/g)?.length ?? 0;
    const strong = line.replace(/`[^`]*`/g, "").match(/\*\*/g)?.length ?? 0;
    const outsideCode = line.replace(/`[^`]*`/g, "");
    const open = outsideCode.match(/(?<!\\)\[/g)?.length ?? 0;
    const close = outsideCode.match(/(?<!\\)\]/g)?.length ?? 0;
    return backticks % 2 === 0 && strong % 2 === 0 && open === close;
  });
}

const word = fc.constantFrom("leave", "policy", "days", "travel", "remote", "desk", "markers", "sources", "quota", "tank");
const piece = fc.oneof(
  word,
  word.map((text) => `\`${text}\``),
  word.map((text) => `\`${text}`),
  word.map((text) => `[${text}](https://example.com/${text})`),
  word.map((text) => `[${text}.md]`),
  fc.constantFrom("[1]", "[^2]", "[3, 4]", "【4:0†notes.md】", "[", "]", "**bold**", "**", "*", "😀", "𝒳", ".", "!", "?", "e.g.", "C:\\"),
);
const sentence = fc.array(piece, { minLength: 3, maxLength: 14 }).map((parts) => `${parts.join(" ")}.`.replace(/^./, (first) => first.toUpperCase()));
const passage = fc.record({
  filename: fc.constantFrom("handbook.md", "notes.txt", "guide.pdf", "docs/policy.md"),
  heading: fc.constantFrom("", "Leave", "Travel [draft]", "Markers `here`"),
  text: fc.array(sentence, { minLength: 1, maxLength: 5 }).map((sentences) => sentences.join(" ")),
  page: fc.option(fc.integer({ min: 1, max: 40 }), { nil: null }),
  title: fc.constantFrom(null, "Employee handbook"),
});

describe("composeAnswer", () => {
  it("writes answers whose every own marker the adapter's citation parser finds, in valid Markdown, whatever the passages hold", () => {
    fc.assert(
      fc.property(fc.array(passage, { minLength: 1, maxLength: 6 }), fc.constantFrom<EmbeddedMode>("ask", "reason", "build"), (passages: Passage[], mode) => {
        const script = composeAnswer({ prompt: "leave policy days travel markers quota", mode }, new DocumentIndex(passages));
        const markers = ownMarkers(script.output);
        const { citations } = citeSources(script.output, script.sources);
        const cited = new Set(citations.map((citation) => [...script.output].slice(citation.start, citation.end).join("")));
        for (const marker of markers) expect(cited.has(marker), `${marker} in ${script.output}`).toBe(true);
        // Every answer that quotes a passage cites it (one that found nothing has nothing to cite).
        if (!script.output.startsWith("I found nothing")) expect(markers.length).toBeGreaterThan(0);
        expect(balanced(script.output), script.output).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("answers the question of the report in valid Markdown, every marker cited", async () => {
    const index = new DocumentIndex(await loadPassages(defaultDocuments()));
    for (const mode of ["ask", "reason", "build"] as const) {
      const script = composeAnswer({ prompt: "How does the adapter cite sources?", mode }, index);
      const markers = ownMarkers(script.output);
      const { citations, sources } = citeSources(script.output, script.sources);
      expect(markers.length).toBeGreaterThan(0);
      expect(citations.length).toBeGreaterThanOrEqual(markers.length);
      expect(sources.every((source) => source.cited)).toBe(true);
      expect(balanced(script.output), script.output).toBe(true);
    }
  });

  it("gives reason and build answers structured sources with their pages and snippets, and cites pages by name", () => {
    const passages: Passage[] = [
      { filename: "travel.pdf", heading: "", text: "Meals are reimbursed up to 60 euros per day. Receipts are required.", page: 2, title: "Travel policy" },
      { filename: "handbook.md", heading: "Leave", text: "Employees receive 25 days of paid leave. Unused days carry over.", page: null, title: null },
    ];
    const index = new DocumentIndex(passages);
    const reason = composeAnswer({ prompt: "meals reimbursed leave days", mode: "reason" }, index);
    expect(reason.output).toContain("[travel.pdf, p. 2]");
    expect(reason.output).toContain("[handbook.md]");
    expect(reason.sources).toEqual(
      expect.arrayContaining([{ filename: "travel.pdf", title: "Travel policy", page: 2, snippet: expect.stringContaining("Meals are reimbursed") }]),
    );
    expect(composeAnswer({ prompt: "meals reimbursed", mode: "build" }, index).output).toMatch(/\[\^1\]/);
    expect(composeAnswer({ prompt: "meals reimbursed", mode: "ask" }, index).sources).toEqual([]);
  });

  it("does not quote a sentence that only introduces a list", () => {
    const passages: Passage[] = [
      { filename: "leave.md", heading: "Leave", text: "Leave is requested as follows:", page: null, title: "Leave" },
      { filename: "leave.md", heading: "Leave", text: "Employees get 25 days of annual leave. Leave is approved by the manager.", page: null, title: "Leave" },
    ];
    const script = composeAnswer({ prompt: "How is leave requested?", mode: "ask" }, new DocumentIndex(passages));
    expect(script.output).toMatch(/^Leave is approved by the manager\. \[1\]\n/);
    expect(script.output).not.toContain("as follows:");
  });
});

describe("sentences and Markdown safety", () => {
  it("never splits inside a code span or a link", () => {
    expect(splitSentences("Use `a. B` here. See [the doc. Part](https://x/y.Z) too. End.")).toEqual([
      "Use `a. B` here.",
      "See [the doc. Part](https://x/y.Z) too.",
      "End.",
    ]);
  });

  it("drops unbalanced code and emphasis marks and escapes brackets that are not links", () => {
    expect(markdownSafe("A `cut code and **half")).toBe("A cut code and half");
    expect(markdownSafe("See [1] and [notes.md] but [a link](https://x) and `[2]`.")).toBe("See \\[1\\] and \\[notes.md\\] but [a link](https://x) and `[2]`.");
    expect(markdownSafe("【4:0†notes.md】")).toBe("\\[4:0†notes.md\\]");
  });
});
