import { type ChildProcess, spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// `npm start` as a new user runs it: build, start against the embedded workspace, print a curl.
const root = join(dirname(fileURLToPath(import.meta.url)), "../../..");
let child: ChildProcess;
let output = "";

beforeAll(async () => {
  child = spawn(process.execPath, ["dist/src/main.js"], {
    cwd: root,
    env: {
      ...process.env,
      PORT: "0",
      EMBEDDED_STEP_DELAY_MS: "5",
      LOG_LEVEL: "info",
      WORKSPACE_BASE_URL: "",
    },
  });
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  const deadline = Date.now() + 45_000; // generous: a busy machine starts a process slowly
  while (!output.includes("-d '") && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 50));
}, 60_000);

afterAll(() => {
  child?.kill("SIGTERM");
});

describe("npm start", () => {
  it("says it uses the embedded workspace and prints a curl that gets a cited answer", async () => {
    expect(output).toMatch(/EMBEDDED WORKSPACE: a local stand-in/);
    const url = /curl -s (\S+)/.exec(output)?.[1];
    const headerLines = [...output.matchAll(/-H "([^:]+): ([^"]+)"/g)];
    const body = /-d '([^']+)'/.exec(output)?.[1];
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions$/);
    const response = await fetch(url as string, {
      method: "POST",
      headers: Object.fromEntries(headerLines.map((match) => [match[1], match[2]])),
      body,
    });
    expect(response.status).toBe(200);
    const completion = (await response.json()) as any;
    const message = completion.choices[0].message;
    expect(message.annotations.length).toBeGreaterThan(0);
    expect(message.sources.some((source: { cited: boolean }) => source.cited)).toBe(true);
    expect(message.content).toMatch(/\n\nSources:\n\[1\] /);
  });

  it("stops cleanly on SIGTERM", async () => {
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });
});

describe("the command line", () => {
  it("answers --help and --version, and refuses unknown flags", async () => {
    const { execFile } = await import("node:child_process");
    const { promisify } = await import("node:util");
    const run = promisify(execFile);
    const help = await run(process.execPath, ["dist/src/main.js", "--help"], { cwd: root });
    expect(help.stdout).toMatch(/--workspace-base-url\s+Base URL of the Workspace Knowledge Service/);
    const version = await run(process.execPath, ["dist/src/main.js", "--version"], { cwd: root });
    expect(version.stdout.trim()).toBe(JSON.parse((await import("node:fs")).readFileSync(join(root, "package.json"), "utf8")).version);
    await expect(run(process.execPath, ["dist/src/main.js", "--nope"], { cwd: root })).rejects.toMatchObject({ code: 2 });
    await expect(run(process.execPath, ["dist/src/main.js"], { cwd: root, env: { ...process.env, PORT: "x" } })).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/PORT/),
    });
  });
});
