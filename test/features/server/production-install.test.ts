import { type ChildProcess, execFile, spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { projectRoot } from "../../../src/util/package-info.js";

// What the Docker image's runtime stage does, without a Docker engine: a clean copy of the built
// app with production dependencies only, started with `node dist/src/main.js`. The dependency set
// is what `npm ci --omit=dev` installs, derived offline (`npm prune --omit=dev` on a copy of the
// installed tree) so that the test talks to no registry.
const run = promisify(execFile);
const root = projectRoot();
const folder = mkdtempSync(join(tmpdir(), "adapter-production-"));
let child: ChildProcess | undefined;

afterAll(() => {
  child?.kill("SIGKILL");
  rmSync(folder, { recursive: true, force: true });
});

describe("a production install", () => {
  it("starts from a clean copy with --omit=dev and answers", async () => {
    for (const entry of ["package.json", "package-lock.json", "dist", "README.md", "docs"]) {
      cpSync(join(root, entry), join(folder, entry), { recursive: true });
    }
    // The installed tree, hard-linked where the file system allows it (pruning only unlinks the copy's names).
    await run("cp", ["-al", join(root, "node_modules"), join(folder, "node_modules")]).catch(() =>
      cpSync(join(root, "node_modules"), join(folder, "node_modules"), { recursive: true }),
    );
    await run("npm", ["prune", "--omit=dev", "--ignore-scripts", "--offline", "--no-audit", "--no-fund"], { cwd: folder, timeout: 120_000 });
    expect(existsSync(join(folder, "node_modules/express"))).toBe(true);
    expect(existsSync(join(folder, "node_modules/typescript"))).toBe(false);
    expect(existsSync(join(folder, "node_modules/vitest"))).toBe(false);

    child = spawn(process.execPath, ["dist/src/main.js", "--port", "0", "--log-format", "json"], {
      cwd: folder,
      // A rate limit, so that its library loads from the production dependencies.
      env: { ...process.env, WORKSPACE_BASE_URL: "", EMBEDDED_STEP_DELAY_MS: "0", RATE_LIMIT_RPM: "100" },
    });
    let output = "";
    child.stdout?.on("data", (chunk) => {
      output += chunk;
    });
    const deadline = Date.now() + 45_000; // generous: a busy machine starts a process slowly
    while (!output.includes("curl -s") && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const base = /serving (http:\/\/\S+\/v1)/.exec(output)?.[1];
    expect(base).toBeDefined();
    expect((await fetch(`${base?.replace(/\/v1$/, "")}/health`)).status).toBe(200);
    const response = await fetch(`${base}/chat/completions`, {
      method: "POST",
      headers: { authorization: "Bearer any", "content-type": "application/json" },
      body: JSON.stringify({ model: "ask", messages: [{ role: "user", content: "How does the adapter cite sources?" }] }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-ratelimit-remaining-requests")).toBe("99");
    expect(((await response.json()) as any).choices[0].message.annotations.length).toBeGreaterThan(0);
    const version = await run(process.execPath, ["dist/src/main.js", "--version"], { cwd: folder });
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  }, 180_000);
});
