import { relative, sep } from "node:path";
import { beforeAll, expect } from "vitest";
import { projectRoot } from "../src/util/package-info.js";
import { BUILD_TIMEOUT_MS, compiled } from "./helpers/compiled.js";

/**
 * Run before each test file (`setupFiles` in vitest.config.ts). Feature suites run the adapter as
 * a user would: some start `node dist/src/main.js`, some load a module of dist/ on a worker thread,
 * so dist/ is made current before any of them runs (built once, test/helpers/compiled.ts). Unit
 * and architecture tests import src/ and need no build: after an edit they rerun in seconds (a
 * unit test that runs a compiled module calls `compiled()` itself).
 */
const FROM_SOURCE = ["test/unit/", "test/architecture/"];

beforeAll(async () => {
  const file = relative(projectRoot(), expect.getState().testPath ?? "").split(sep).join("/");
  if (!FROM_SOURCE.some((folder) => file.startsWith(folder))) await compiled();
}, BUILD_TIMEOUT_MS);
