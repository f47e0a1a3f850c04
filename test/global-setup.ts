import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
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

/** Whether dist/src holds a compiled file, at least as new, for every source file (the playground and the answer card are bundled apart). */
function distIsCurrent(): boolean {
  const sources = readdirSync(join(root, "src"), { recursive: true, withFileTypes: true }).filter(
    (entry) => entry.isFile() && entry.name.endsWith(".ts") && !["playground", "mcp-app"].some((page) => join(entry.parentPath, entry.name).includes(join("src", page))),
  );
  return sources.every((entry) => {
    const source = join(entry.parentPath, entry.name);
    const compiled = join(root, "dist", relative(root, source)).replace(/\.ts$/, ".js");
    try {
      return statSync(compiled).mtimeMs >= statSync(source).mtimeMs;
    } catch {
      return false;
    }
  });
}

/**
 * Before the suite: the tests that start the real entry point run the compiled code, so dist/
 * must be current. `npm test` has just written it (its typecheck emits); a bare `npx vitest`
 * builds it here. After the suite: repeats, at the very end, which suites were skipped for want of
 * an external program (test/helpers/external-programs.ts), and how to run them.
 */
export default function setup(): () => void {
  if (!distIsCurrent()) {
    execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], { cwd: root, stdio: "inherit" });
  }
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
