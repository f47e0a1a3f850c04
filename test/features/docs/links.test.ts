import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../../../src/util/package-info.js";
import { anchorsOf, linkProblems, slugOf } from "../../helpers/markdown-links.js";

// The README is the entry and docs/ the pages it leads to (docs/development.md, "The docs"):
// every relative link between them must lead somewhere, and the README must stay short.

const root = projectRoot();
// Every page of docs/, its topic folders (docs/architecture/) included.
const docsPages = readdirSync(join(root, "docs"), { recursive: true, encoding: "utf8" })
  .filter((name) => name.endsWith(".md"))
  .map((name) => `docs/${name.split(sep).join("/")}`)
  .sort();
const pages = ["README.md", ...docsPages];

describe("the links of README.md and docs/", () => {
  it("resolve: every relative link names a file of the repository, and every #anchor a heading of its page", () => {
    expect(pages.length).toBeGreaterThan(10);
    expect(pages.flatMap((page) => linkProblems(root, page))).toEqual([]);
  });

  it("are really checked: a missing file, a missing heading here or there, and a path out of the repository are each found", () => {
    const scratch = mkdtempSync(join(tmpdir(), "links-"));
    try {
      mkdirSync(join(scratch, "docs"));
      writeFileSync(join(scratch, "docs/a.md"), "# A\n\n## Set-up (`npm start`)\n\n## Set-up (`npm start`)\n");
      writeFileSync(
        join(scratch, "README.md"),
        [
          "# Entry",
          "[fine](docs/a.md#set-up-npm-start) [repeat](docs/a.md#set-up-npm-start-1) [here](#entry) [web](https://example.com/x.md)",
          "[gone](docs/missing.md) [no heading](docs/a.md#setup) [no heading here](#nowhere) [out](../outside.md)",
          "![picture](docs/missing.png)",
          "```md",
          "[in a fence](docs/not-checked.md)",
          "```",
          "`[in code](docs/not-checked.md)`",
        ].join("\n"),
      );
      expect(linkProblems(scratch, "README.md")).toEqual([
        "README.md:3: docs/missing.md: no file docs/missing.md",
        "README.md:3: docs/a.md#setup: no heading #setup in docs/a.md",
        "README.md:3: #nowhere: no heading #nowhere in README.md",
        "README.md:3: ../outside.md: outside the repository",
        "README.md:4: docs/missing.png: no file docs/missing.png",
      ]);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  it("name headings as GitHub does (github-slugger's rule)", () => {
    expect(slugOf("Vercel AI SDK (@ai-sdk/openai, Responses)")).toBe("vercel-ai-sdk-ai-sdkopenai-responses");
    expect(slugOf("The Responses API's mcp tool")).toBe("the-responses-apis-mcp-tool");
    expect(slugOf("Über café — 2 × 3 😀")).toBe("über-café--2--3-");
    expect(slugOf("snake_case and kebab-case")).toBe("snake_case-and-kebab-case");
    expect([...anchorsOf("# Title\n## `X-Chat-Annotations` **header**\n## Title\n```\n# not a heading\n```\n<a id=\"kept\"></a>")]).toEqual([
      "title",
      "x-chat-annotations-header",
      "title-1",
      "kept",
    ]);
  });
});

describe("the README", () => {
  const readme = readFileSync(join(root, "README.md"), "utf8");

  it("is an entry of at most 300 lines that opens with the two commands", () => {
    expect(readme.split("\n").length).toBeLessThanOrEqual(300);
    expect(readme).toMatch(/^# workspace-openai-adapter\n\n```sh\nnpm install && npm start {2,}#[^\n]*\nnpm test {2,}#[^\n]*\n```\n/);
  });

  it("leads to every page of docs/ (a topic folder's pages through their entry page)", () => {
    const linked = new Set([...readme.matchAll(/\]\((docs\/[\w-]+\.md)\)/g)].map((match) => match[1]));
    expect(docsPages.filter((page) => /^docs\/[\w-]+\.md$/.test(page) && !linked.has(page))).toEqual([]);
  });
});

describe("docs/architecture.md", () => {
  const entry = readFileSync(join(root, "docs/architecture.md"), "utf8");

  it("is an entry of at most 300 lines that leads to every topic page of docs/architecture/", () => {
    expect(entry.split("\n").length).toBeLessThanOrEqual(300);
    const topics = docsPages.filter((page) => page.startsWith("docs/architecture/"));
    expect(topics.length).toBeGreaterThan(3);
    const linked = new Set([...entry.matchAll(/\]\((architecture\/[\w-]+\.md)[#)]/g)].map((match) => `docs/${match[1]}`));
    expect(topics.filter((page) => !linked.has(page))).toEqual([]);
  });
});
