import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import type { ExternalProgram } from "./external-programs.js";

/** The Codex CLI the OAuth test logs in with (its client ID metadata document is chatgpt.com's). */
export const CODEX_VERSION = "0.171.0";

/** Where the Codex CLI is installed on demand: a cache outside the repository, kept between runs. */
function codexFolder(): string {
  const cache = process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache");
  return join(cache, "workspace-openai-adapter", `codex-${CODEX_VERSION}`);
}

/** The `codex` command of the cached install. */
export function codexPath(): string {
  return process.env.CODEX_PATH ?? join(codexFolder(), "node_modules", ".bin", "codex");
}

/**
 * Installs `@openai/codex` into the cache from the npm registry when it is not there (its package
 * carries a binary of about 400 MB, so it is never a dependency `npm install` pulls for everyone,
 * as `.ci/run` installs Node lines); the reason it cannot be had, or null.
 */
function installCodex(): string | null {
  if (existsSync(codexPath())) return null;
  if (process.env.CODEX_PATH) return `no Codex CLI at CODEX_PATH (${process.env.CODEX_PATH})`;
  const npm = join(dirname(process.execPath), "npm");
  const installed = spawnSync(existsSync(npm) ? npm : "npm", ["install", "--prefix", codexFolder(), "--no-save", "--no-audit", "--no-fund", `@openai/codex@${CODEX_VERSION}`], {
    stdio: "ignore",
    timeout: 10 * 60_000,
  });
  if (installed.status !== 0 || !existsSync(codexPath())) return `@openai/codex@${CODEX_VERSION} could not be installed from the npm registry into ${codexFolder()}`;
  const runs = spawnSync(codexPath(), ["--version"], { stdio: "ignore", timeout: 30_000 });
  return runs.status === 0 ? null : `the Codex CLI at ${codexPath()} does not run`;
}

/** The Codex CLI, installed on demand into the cache (the first run downloads it). */
export const CODEX: ExternalProgram = {
  name: "codex (the Codex CLI)",
  missing: installCodex,
  howTo: `let the test install @openai/codex@${CODEX_VERSION} from the npm registry (it needs the registry once), or set CODEX_PATH to a codex binary`,
};
