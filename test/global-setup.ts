import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

const mtime = (path: string) => {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return -1;
  }
};

/** Whether a built page is at least as new as every file of the source folders it is bundled from. */
function pageIsCurrent(built: string, folders: string[]): boolean {
  const builtAt = mtime(join(root, built));
  const sources = folders.flatMap((folder) => readdirSync(join(root, folder), { withFileTypes: true }).filter((entry) => entry.isFile()));
  return builtAt >= 0 && sources.every((entry) => mtime(join(entry.parentPath, entry.name)) <= builtAt);
}

/**
 * Before the suite: the browser pages an adapter serves (the playground and the answer card, each
 * one esbuild bundle, well under a second) are made current. dist/src, which tsc takes several
 * seconds to write, is built only when a test that runs it is about to (test/compiled-setup.ts), so
 * that a unit test reruns in seconds after an edit; `npm test` has just written it (its typecheck
 * emits). After the suite: repeats, at the very end, which suites were skipped for want of an
 * external program (test/helpers/external-programs.ts), and how to run them.
 */
export default function setup(): () => void {
  if (!pageIsCurrent("dist/playground/app.js", ["src/playground"])) {
    execFileSync(process.execPath, [join(root, "scripts/build-playground.mjs")], { cwd: root, stdio: "inherit" });
  }
  // The answer card bundles the playground's Markdown renderer.
  if (!pageIsCurrent("dist/mcp-app/answer-v1.html", ["src/mcp-app", "src/playground"])) {
    execFileSync(process.execPath, [join(root, "scripts/build-answer-card.mjs")], { cwd: root, stdio: "inherit" });
  }
  const skipped = mkdtempSync(join(tmpdir(), "adapter-skipped-"));
  process.env.SKIPPED_SUITES_DIR = skipped;
  return () => {
    const notes = [...new Set(readdirSync(skipped).map((file) => readFileSync(join(skipped, file), "utf8")))].sort();
    rmSync(skipped, { recursive: true, force: true });
    if (notes.length === 0) return;
    process.stdout.write(`\n${notes.length} test suite(s) SKIPPED for want of an external program:\n${notes.map((note) => `  - ${note}`).join("\n")}\n\n`);
  };
}
