import { fileURLToPath } from "node:url";
import { configDefaults, defineConfig, type Plugin } from "vitest/config";

// CI (.ci/run) asks for a JSON report beside the usual output, to print its own summary line.
const jsonReport = process.env.VITEST_JSON_REPORT;

/**
 * Suites that load the whole machine (many processes, a thousand connections, a production
 * install, 29 clients at once): they run after the others, one at a time, so that neither they
 * nor the timing-sensitive suites measure each other's load.
 */
const HEAVY = [
  "test/features/server/cluster.test.ts",
  "test/features/load/load.test.ts",
  "test/features/server/production-install.test.ts",
  "test/features/compat/client-matrix.test.ts",
  // Starts the MCP Inspector's command line three times: each a Node process loading a large bundle.
  "test/features/mcp/mcp-real-clients.test.ts",
];

/**
 * The Open Responses compliance suite, vendored unmodified in test/fixtures/openresponses/compliance
 * (its README), is written for zod 3: its `zod` imports resolve to the zod 3 API that the project's
 * zod 4 ships as `zod/v3`. Every other module's `zod` stays zod 4.
 */
const COMPLIANCE_SUITE = fileURLToPath(new URL("test/fixtures/openresponses/compliance/", import.meta.url));
const complianceSuiteZod: Plugin = {
  name: "open-responses-compliance-zod-v3",
  enforce: "pre",
  resolveId(source, importer) {
    return source === "zod" && importer?.startsWith(COMPLIANCE_SUITE) ? this.resolve("zod/v3", importer, { skipSelf: true }) : null;
  },
};

const shared = {
  globalSetup: ["test/global-setup.ts"],
  // dist/ made current before a test that runs it (feature suites), never for a unit test (test/compiled-setup.ts).
  setupFiles: ["test/compiled-setup.ts"],
  testTimeout: 20_000,
  hookTimeout: 20_000,
  pool: "forks" as const,
  // Each worker imports the adapter once for all the files it runs, rather than once per file: on two
  // cores that import was a fifth of the suite's CPU (229 s → 158 s in all). Safe because no module
  // keeps state between adapters (metrics registries, tracing and stores belong to an adapter), and
  // the tests that fake timers or spy on a prototype put them back after each test.
  isolate: false,
  // The load test compares heap before and after; it needs to run the collector itself.
  execArgv: ["--expose-gc"],
};

export default defineConfig({
  test: {
    reporters: jsonReport ? ["default", ["json", { outputFile: jsonReport }]] : ["default"],
    projects: [
      {
        plugins: [complianceSuiteZod],
        test: {
          ...shared,
          name: "suite",
          include: ["test/**/*.test.ts"],
          // Setting `exclude` replaces vitest's defaults: keep them (test/compat/clients has a node_modules of its own).
          exclude: [...configDefaults.exclude, ...HEAVY],
          // Most suites wait on sockets, timers and failovers rather than compute: four at once on two
          // cores (the Redis Cluster and Sentinel suites among them: they mostly wait for a failover).
          maxWorkers: 4,
          sequence: { groupOrder: 0 },
        },
      },
      {
        plugins: [complianceSuiteZod],
        test: { ...shared, name: "heavy", include: HEAVY, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
