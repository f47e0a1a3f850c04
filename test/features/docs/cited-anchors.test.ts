import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../../../src/util/package-info.js";
import { anchorsOf } from "../../helpers/markdown-links.js";

// Source comments cite the docs by path and anchor (`docs/architecture/redis.md#redis-down-or-slow`)
// so that the code and the docs point at each other: a page split or a heading renamed must not
// leave a comment pointing nowhere.

const root = projectRoot();

/** The folders whose files may cite the docs, and what in them is not a citation. */
const FOLDERS = ["src", "test", "bench", "scripts", "examples"];
const SKIPPED = [
  // Vendored material and other packages' own docs.
  "test/fixtures/",
  "test/compat/clients/",
  // The docs tests, whose pages and links are made up to test the checker.
  "test/features/docs/",
  // A file name in a made-up workspace, not a citation.
  "test/unit/embedded-workspace/compose-answer.test.ts",
];

/** A citation: `docs/<page>.md`, then optionally `#<anchor>`, not inside a longer path or URL. */
const CITATION = /(?<![\w./-])docs\/([\w/-]+\.md)(?:#([\w-]+))?/g;

function sourceFiles(): string[] {
  return FOLDERS.flatMap((folder) =>
    readdirSync(join(root, folder), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && /\.(ts|mts|mjs|js|sh|py|ya?ml)$/.test(entry.name))
      .map((entry) => relative(root, join(entry.parentPath, entry.name)).split(sep).join("/"))
      .filter((path) => !path.includes("node_modules/") && !SKIPPED.some((skipped) => path.startsWith(skipped))),
  );
}

/** What is wrong with each citation of `text` (a file at `path`), against the pages under `docsRoot`. */
function citationProblems(docsRoot: string, path: string, text: string): string[] {
  const anchors = new Map<string, Set<string>>();
  const problems: string[] = [];
  text.split("\n").forEach((line, index) => {
    for (const [cited, page, anchor] of line.matchAll(CITATION)) {
      const file = join(docsRoot, "docs", page as string);
      const at = `${path}:${index + 1}: ${cited}`;
      if (!existsSync(file)) problems.push(`${at}: no page docs/${page}`);
      else if (anchor !== undefined) {
        const offered = anchors.get(file) ?? anchors.set(file, anchorsOf(readFileSync(file, "utf8"))).get(file);
        if (!offered?.has(anchor)) problems.push(`${at}: no heading #${anchor} in docs/${page}`);
      }
    }
  });
  return problems;
}

describe("the docs cited in source comments", () => {
  it("exist, and each #anchor is a heading (or an explicit anchor) of its page", () => {
    const files = sourceFiles();
    expect(files.length).toBeGreaterThan(300);
    const cited = files.flatMap((path) => citationProblems(root, path, readFileSync(join(root, path), "utf8")));
    expect(cited).toEqual([]);
  });

  it("are really checked: a missing page and a missing anchor are found, a URL and a longer path are not citations", () => {
    const text = [
      "// docs/architecture.md#modules and docs/architecture/redis.md#redis-down-or-slow",
      "// docs/gone.md#x, docs/architecture.md#no-such-heading",
      "// https://example.com/docs/missing.md#a and packages/x/docs/missing.md",
    ].join("\n");
    expect(citationProblems(root, "x.ts", text)).toEqual([
      "x.ts:2: docs/gone.md#x: no page docs/gone.md",
      "x.ts:2: docs/architecture.md#no-such-heading: no heading #no-such-heading in docs/architecture.md",
    ]);
  });
});
