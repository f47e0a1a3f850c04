import { defineConfig } from "vitest/config";

// CI (.ci/run) asks for a JSON report beside the usual output, to print its own summary line.
const jsonReport = process.env.VITEST_JSON_REPORT;

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: "forks",
    // Most suites wait on sockets and timers rather than compute: three at once on two cores keeps
    // the whole run near a minute (one per core left half the machine idle).
    maxWorkers: 3,
    // The load test compares heap before and after; it needs to run the collector itself.
    execArgv: ["--expose-gc"],
    reporters: jsonReport ? ["default", ["json", { outputFile: jsonReport }]] : ["default"],
  },
});
