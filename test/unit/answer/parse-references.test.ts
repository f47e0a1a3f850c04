import { Worker } from "node:worker_threads";
import { beforeAll, describe, expect, it } from "vitest";
import { parseReferences, parseReferenceText } from "../../../src/answer/parse-references.js";
import { BUILD_TIMEOUT_MS, compiled } from "../../helpers/compiled.js";

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

/**
 * Runs parseReferences (the build in dist/, made current by `compiled()`) on a worker thread and
 * fails if it has not returned `limitMs` after the module was loaded: a regular expression that
 * backtracks catastrophically blocks its thread, so the limit has to be kept from another one. The
 * limit guards against a hang (the backtracking took minutes), not a speed: it is generous, and
 * starts once the worker has loaded the module, so a busy machine cannot reach it. How fast parsing
 * is belongs to the benchmark.
 */
async function parseWithin(text: string, limitMs: number): Promise<unknown> {
  const moduleUrl = new URL("../../../dist/src/answer/parse-references.js", import.meta.url).href;
  const worker = new Worker(
    `const { parentPort, workerData } = require("node:worker_threads");
     import(workerData.moduleUrl).then(({ parseReferences }) => {
       parentPort.postMessage({ loaded: true });
       parentPort.postMessage({ result: parseReferences(workerData.text) });
     });`,
    { eval: true, workerData: { moduleUrl, text } },
  );
  let timer: NodeJS.Timeout | undefined;
  try {
    return await new Promise((resolve, reject) => {
      worker.on("message", (message: { loaded?: true; result?: unknown }) => {
        if (message.loaded) timer = setTimeout(() => reject(new Error(`parseReferences took over ${limitMs} ms`)), limitMs);
        else resolve(message.result);
      });
      worker.once("error", reject);
    });
  } finally {
    clearTimeout(timer);
    await worker.terminate();
  }
}

describe("parseReferences on hostile text", () => {
  beforeAll(compiled, BUILD_TIMEOUT_MS);
  // The first heading pattern backtracked catastrophically on the first two (minutes for 1,000 spaces).
  it.each([
    ["a heading word followed by spaces and more", `Intro.\nSources${" ".repeat(990)}x`],
    ["a heading in bold with spaces inside", `Intro.\n## **Sources${" ".repeat(900)}:${" ".repeat(50)}**x`],
    ["a very long line after a heading", `Intro.\nSources:\n${"a.".repeat(20_000)}!`],
  ])("gives up without backtracking on %s", async (_name, text) => {
    expect(await parseWithin(text, 10_000)).toBeNull();
  });

  it("still finds headings with spaces around their parts", () => {
    expect(parseReferences("Text [1].\n\n  ## **Sources** :  \n[1] handbook.pdf")?.entries).toHaveLength(1);
  });
});
