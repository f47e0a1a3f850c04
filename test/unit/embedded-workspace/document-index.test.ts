import { describe, expect, it } from "vitest";
import { proseOf, splitPassages } from "../../../src/embedded-workspace/document-index.js";

describe("splitPassages", () => {
  it("quotes prose only: no code, tables, images or layout HTML, and links to other documents keep only their text", () => {
    const markdown = [
      "# Guide",
      "## Screens",
      "![The playground](docs/playground.png)",
      '<img src="docs/narrow.png" alt="narrow" width="300">',
      "",
      "The playground streams answers. See [the benchmarks](docs/benchmarks.md), [OpenAI](https://openai.com) and <https://example.com>.",
      "Pick `<workspace>/<mode>` as the model.<br>",
      "",
      "```sh",
      "npm start",
      "```",
      "| a | b |",
      "<!-- a comment the reader never sees -->",
    ].join("\n");
    expect(splitPassages("guide.md", markdown)).toEqual([
      {
        filename: "guide.md",
        heading: "Screens",
        text: "The playground streams answers. See the benchmarks, [OpenAI](https://openai.com) and <https://example.com>.\nPick `<workspace>/<mode>` as the model.",
        page: null,
        title: "Guide",
      },
    ]);
  });

  it("leaves out comments that span lines, and a paragraph around one stays one paragraph", () => {
    const markdown = [
      "# Notes",
      "Leave is booked in the HR portal. <!-- TODO:",
      "",
      "check this with HR [1]",
      "--> Managers approve it within a week.",
      "<!-- a comment on one line -->",
      "<!--",
      "```",
      "-->",
      "Unused days carry over until March.",
      "",
      "<!-- an open comment runs to the end of the file",
      "Nobody reads this.",
    ].join("\n");
    expect(splitPassages("notes.md", markdown).map((passage) => passage.text)).toEqual([
      "Leave is booked in the HR portal.\n Managers approve it within a week.\nUnused days carry over until March.",
    ]);
    expect(splitPassages("notes.txt", markdown).map((passage) => passage.text).join("\n")).toContain("TODO:");
  });

  it("quotes a text file's characters as they are", () => {
    const text = "Tags such as <img src=x> and [brackets](here) are text in a .txt file.";
    expect(splitPassages("notes.txt", text).map((passage) => passage.text)).toEqual([text]);
  });

  it("leaves a line that is only an image or markup out altogether", () => {
    expect(proseOf("  ![x](y.png) <br>")).toBe("");
    expect(proseOf("<p align=\"center\">Centered words</p>")).toBe("Centered words");
  });
});
