import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { projectRoot } from "../../src/util/package-info.js";

const root = projectRoot();

/** A build on a busy machine takes tens of seconds: longer than a hook's usual bound (a hook that builds takes this one). */
export const BUILD_TIMEOUT_MS = 300_000;

/** The folders under src/ that esbuild bundles for the browser, which tsc leaves out (tsconfig.build.json). */
const BUNDLED = ["playground", "mcp-app"].map((folder) => join(root, "src", folder));

/**
 * Whether dist/src holds a compiled file, at least as new, for every source file tsc compiles:
 * src/ but its browser bundles, and but declaration files (a `.d.ts` compiles to nothing).
 */
export function distIsCurrent(): boolean {
  const sources = readdirSync(join(root, "src"), { recursive: true, withFileTypes: true }).filter(
    (entry) => entry.isFile() && entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") && !BUNDLED.some((folder) => entry.parentPath.startsWith(folder)),
  );
  return sources.every((entry) => {
    const source = join(entry.parentPath, entry.name);
    const built = join(root, "dist", relative(root, source)).replace(/\.ts$/, ".js");
    try {
      return statSync(built).mtimeMs >= statSync(source).mtimeMs;
    } catch {
      return false;
    }
  });
}

/** Whether the lock's holder is gone: its process ended, or it never wrote its pid (a lock older than a minute). */
function holderGone(lock: string): boolean {
  try {
    const pid = Number(readFileSync(join(lock, "pid"), "utf8"));
    process.kill(pid, 0);
    return false;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EPERM") return false;
    try {
      return (error as NodeJS.ErrnoException).code === "ESRCH" || Date.now() - statSync(lock).mtimeMs > 60_000;
    } catch {
      return true;
    }
  }
}

/**
 * Makes dist/src current for a test that runs the compiled adapter (`node dist/src/main.js`, a
 * worker thread on a module of dist/): unit tests import src/ and need no build, so the build
 * happens only when a test that needs it runs (test/compiled-setup.ts), not on every run. A run's
 * worker processes go on at once: the first to find dist/ out of date builds it under a lock (a
 * folder made atomically, holding its pid), the others wait for it and look again.
 */
export async function compiled(): Promise<void> {
  if (distIsCurrent()) return;
  const lock = join(root, "dist", ".build-lock");
  mkdirSync(join(root, "dist"), { recursive: true });
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    if (holderGone(lock)) rmSync(lock, { recursive: true, force: true });
    // The interval between two looks at a build that has no deadline of its own but the hook's.
    else await sleep(200);
  }
  try {
    writeFileSync(join(lock, "pid"), String(process.pid));
    if (!distIsCurrent()) {
      execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], { cwd: root, stdio: "inherit" });
    }
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}
