import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "vitest";

/** A program some tests need that `npm install` cannot provide (a server, a browser). */
export interface ExternalProgram {
  /** What the tests call it in notes: `redis-server`. */
  name: string;
  /** Why it is missing, or null when the tests can run. */
  missing(): string | null;
  /** How to make it available, for the note. */
  howTo: string;
}

/** Whether a command runs at all (`<command> --version` exits 0). */
export function commandWorks(command: string, args: string[] = ["--version"]): boolean {
  const result = spawnSync(command, args, { stdio: "ignore", timeout: 10_000 });
  return result.status === 0;
}

/** redis-server on PATH, or a running Redis named by REDIS_URL. */
export const REDIS: ExternalProgram = {
  name: "redis-server",
  missing: () =>
    process.env.REDIS_URL || commandWorks("redis-server") ? null : "redis-server is not installed and REDIS_URL is not set",
  howTo: "install redis-server (apt-get install redis-server), or set REDIS_URL=redis://host:port to use a running Redis",
};

/** redis-server and redis-cli themselves (a REDIS_URL is not enough): the suites that start clusters, sentinels and TLS servers of their own. */
export const REDIS_SERVERS: ExternalProgram = {
  name: "redis-server and redis-cli",
  missing: () => (commandWorks("redis-server") && commandWorks("redis-cli") ? null : "redis-server or redis-cli is not installed"),
  howTo: "install redis-server (apt-get install redis-server; it brings redis-cli)",
};

/** openssl, for the certificates of the TLS tests. */
export const OPENSSL: ExternalProgram = {
  name: "openssl",
  missing: () => (commandWorks("openssl", ["version"]) ? null : "openssl is not installed"),
  howTo: "install openssl (apt-get install openssl)",
};

/** The Chromium the browser tests drive (Debian's package; CHROMIUM_PATH overrides its path). */
export const CHROMIUM: ExternalProgram = {
  name: "chromium",
  missing: () => (existsSync(chromiumPath()) ? null : `no Chromium at ${chromiumPath()}`),
  howTo: "install chromium (apt-get install chromium), or set CHROMIUM_PATH to a Chromium or Chrome binary",
};

/** Debian's prometheus, which scrapes the adapter's /metrics in the metrics test (PROMETHEUS_PATH overrides it). */
export const PROMETHEUS: ExternalProgram = {
  name: "prometheus",
  missing: () => (commandWorks(prometheusPath()) ? null : `prometheus is not installed (no working ${prometheusPath()})`),
  howTo: "install prometheus (apt-get install prometheus), or set PROMETHEUS_PATH to a prometheus binary",
};

/** The prometheus the metrics test runs. */
export function prometheusPath(): string {
  return process.env.PROMETHEUS_PATH ?? "prometheus";
}

/** Where the browser tests find Chromium. */
export function chromiumPath(): string {
  return process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
}

/**
 * A `describe` that needs an external program. Without it, the suite is skipped with a note that
 * the test run's summary repeats (test/global-setup.ts); with REQUIRE_EXTERNAL_PROGRAMS=1 (CI sets
 * it), a missing program is a failing test carrying the same note instead.
 */
export function describeWith(program: ExternalProgram, title: string, body: () => void): void {
  const missing = program.missing();
  if (!missing) {
    describe(title, body);
    return;
  }
  const note = `${title}: skipped because ${missing}; to run them, ${program.howTo}`;
  if (process.env.REQUIRE_EXTERNAL_PROGRAMS === "1") {
    describe(title, () => {
      it(`needs ${program.name}`, () => {
        throw new Error(`${note} (REQUIRE_EXTERNAL_PROGRAMS=1 makes this a failure)`);
      });
    });
    return;
  }
  recordSkip(note);
  describe.skip(`${title} [skipped: ${missing}]`, body);
}

/** Leaves the note where the global teardown collects it (test workers are separate processes). */
function recordSkip(note: string): void {
  const folder = process.env.SKIPPED_SUITES_DIR;
  if (!folder) return;
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, `${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}.txt`), note);
}
