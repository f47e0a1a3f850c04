import { execFile } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCheckCommand } from "../../src/check/check-command.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");

/** What a run of `check` printed, and its exit code. */
export interface CheckOutput {
  code: number;
  stdout: string;
  stderr: string;
}

/** The variables every test run of `check` starts from: a fast poll, and nothing of the machine's environment. */
export const CHECK_ENVIRONMENT = { POLL_INTERVAL_MIN_MS: "10", POLL_INTERVAL_MAX_MS: "50" };

/** Runs `check` in this process (the command's own function), as the CLI would with these arguments and variables. */
export async function runCheck(args: string[], environment: Record<string, string> = {}): Promise<CheckOutput> {
  let stdout = "";
  let stderr = "";
  const code = await runCheckCommand(args, { ...CHECK_ENVIRONMENT, ...environment }, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { code, stdout, stderr };
}

/** Runs the real CLI, `node dist/src/main.js check …`, as a child process. */
export function runCheckCli(args: string[], environment: Record<string, string> = {}): Promise<CheckOutput> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["dist/src/main.js", "check", ...args],
      { cwd: root, env: { PATH: process.env.PATH ?? "", ...CHECK_ENVIRONMENT, ...environment }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** The report of `check --json`. */
export interface CheckReport {
  checks: { name: string; level: "pass" | "warn" | "fail" | "skip"; ok: boolean; detail: string; setting?: string }[];
  summary: { passed: number; warnings: number; failed: number; skipped: number };
  queries: { mode: string; id: string }[];
  answers: {
    question: string;
    ours: { content: string; sources: unknown[]; annotations: unknown[] } | null;
    service: unknown;
  } | null;
  recording: string | null;
}

/** The check of that name in a report (failing the test when there is none). */
export function checkNamed(report: CheckReport, name: string): CheckReport["checks"][number] {
  const found = report.checks.find((check) => check.name === name);
  if (!found) throw new Error(`no check named ${name} in ${report.checks.map((check) => check.name).join(", ")}`);
  return found;
}
