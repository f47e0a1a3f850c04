import { afterEach, describe, expect, it } from "vitest";
import { type RunningWorkspace, type StartOptions, startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import { type DeviatingUpstream, type Deviations, startDeviatingUpstream } from "../../helpers/deviating-upstream.js";
import { type CheckReport, checkNamed, runCheck, runCheckCli } from "../../helpers/run-check.js";
import { API_KEY, FIXTURE_DOCUMENTS } from "../../helpers/start-stack.js";

// `workspace-openai-adapter check` (docs/check.md) against the embedded workspace, and against
// services that deviate from what the adapter assumes, each over real loopback HTTP.

const QUESTION = "How are travel expenses reimbursed?";
const running: { close(): Promise<void> }[] = [];

afterEach(async () => {
  for (const each of running.splice(0).reverse()) await each.close();
});

async function workspace(options: Partial<StartOptions> = {}): Promise<RunningWorkspace> {
  const started = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], apiKeys: [API_KEY], stepDelayMs: 20, ...options });
  running.push(started);
  return started;
}

async function deviating(deviations: Deviations, options: Partial<StartOptions> = {}): Promise<DeviatingUpstream> {
  const behind = await workspace(options);
  const upstream = await startDeviatingUpstream(behind.url, deviations);
  running.push(upstream);
  return upstream;
}

/** `check --json` against `url` in workspace acme, with the test key unless told otherwise. */
async function checkJson(url: string, extra: string[] = [], environment: Record<string, string> = {}): Promise<{ code: number; report: CheckReport; stderr: string }> {
  const output = await runCheck(["--workspace-base-url", url, "--workspace", "acme", "--question", QUESTION, "--json", ...extra], { WORKSPACE_API_KEY: API_KEY, ...environment });
  return { code: output.code, report: JSON.parse(output.stdout) as CheckReport, stderr: output.stderr };
}

/** The names of the checks that did not pass. */
const notPassed = (report: CheckReport) => report.checks.filter((check) => check.level !== "pass").map((check) => `${check.name}:${check.level}`);

// Each test runs whole checks, with the adapter itself started inside: generous on a busy machine.
describe("check against the embedded workspace", { timeout: 45_000 }, () => {
  it("passes every check through the real CLI, one line each, and exits 0", async () => {
    const embedded = await workspace();
    const output = await runCheckCli(["--workspace-base-url", embedded.url, "--workspace", "acme", "--question", QUESTION], { WORKSPACE_API_KEY: API_KEY });
    expect(output.code, output.stdout + output.stderr).toBe(0);
    const lines = output.stdout.trim().split("\n");
    for (const name of ["health", "credential", "workspace", "create", "list-order", "list-paging", "query.ask", "query.reason", "query.build", "steps", "sources", "markers", "realtime", "adapter-answer"]) {
      expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^✓ ${name.replace(".", "\\.")}: `)));
    }
    // The embedded workspace has no chat completions of its own: said, and not a failure.
    expect(lines).toContainEqual(expect.stringMatching(/^! service-chat-completions: the service has no \/v1\/chat\/completions \(404\)/));
    expect(lines.at(-1)).toBe("14 passed, 1 warning, 0 failed");
    // Said before it asks, on stderr: the labelled queries it is about to create.
    expect(output.stderr).toMatch(/now asking 3 labelled queries in workspace 'acme' \(ask, reason, build\)/);
    expect(embedded.control.creates.map(({ body }) => body.content)).toEqual(
      ["ask", "reason", "build", "chat"].map((what) => `[workspace-openai-adapter check · ${what}] ${QUESTION}`),
    );
  }, 60_000);

  it("reports JSON: {checks: [{name, ok, detail, setting?}], summary, …}", async () => {
    const embedded = await workspace();
    const { code, report } = await checkJson(embedded.url, ["--modes", "ask"]);
    expect(code).toBe(0);
    expect(notPassed(report)).toEqual(["service-chat-completions:warn"]);
    expect(report.checks.every((check) => check.ok && typeof check.detail === "string")).toBe(true);
    expect(report.summary).toEqual({ passed: 12, warnings: 1, failed: 0, skipped: 0 });
    expect(report.queries.map((query) => query.mode)).toEqual(["ask"]);
    expect(checkNamed(report, "realtime").detail).toMatch(/the text matches the polled output \(ask\)/);
    expect(report.answers?.ours?.content).toMatch(/\[1\]/);
  });

  it("with --read-only asks no query: health, credential, workspace and paging only", async () => {
    const embedded = await workspace();
    const { code, report } = await checkJson(embedded.url, ["--read-only"]);
    expect(code).toBe(0);
    expect(embedded.control.calls.create).toBe(0);
    expect(report.checks.filter((check) => check.level !== "skip").map((check) => check.name)).toEqual(["health", "credential", "workspace", "list-paging"]);
    expect(checkNamed(report, "list-paging")).toMatchObject({ level: "warn", detail: expect.stringMatching(/no query/) });
    expect(checkNamed(report, "create").detail).toBe("not run: --read-only asks no query");
  });

  it("passes against a conformant test upstream in front of it too", async () => {
    const upstream = await deviating({});
    const { code, report } = await checkJson(upstream.url, ["--modes", "ask,reason"]);
    expect(code).toBe(0);
    expect(notPassed(report)).toEqual(["service-chat-completions:warn"]);
  });
});

describe("check against a service that deviates", { timeout: 45_000 }, () => {
  it("a mode field named otherwise: create fails naming MODE_FIELD, and passes with it set (the real CLI)", async () => {
    const upstream = await deviating({ requireField: "interaction_mode" }, { modeField: "interaction_mode" });
    const args = ["--workspace-base-url", upstream.url, "--workspace", "acme", "--question", QUESTION, "--modes", "ask"];
    const wrong = await runCheckCli(args, { WORKSPACE_API_KEY: API_KEY });
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toMatch(
      /^✗ create: POST \/queries \(ask\) answered 422 body\.interaction_mode: Field required \(missing\): the service wants its interaction mode in 'interaction_mode', not 'mode': set MODE_FIELD=interaction_mode \(setting: MODE_FIELD\)$/m,
    );
    expect(wrong.stdout).toMatch(/^– query\.ask: not run: create failed$/m);
    const right = await runCheckCli(args, { WORKSPACE_API_KEY: API_KEY, MODE_FIELD: "interaction_mode" });
    expect(right.code, right.stdout).toBe(0);
    expect(right.stdout).toMatch(/^✓ create: POST \/queries with \{content, id, interaction_mode\} accepted \(ask\)/m);
  }, 60_000);

  it("oldest-first lists: list-order fails (the poller reads newest first)", async () => {
    const upstream = await deviating({ oldestFirst: true });
    const { code, report } = await checkJson(upstream.url, ["--modes", "ask,reason"]);
    expect(code).toBe(1);
    expect(checkNamed(report, "list-order")).toMatchObject({ level: "fail", detail: expect.stringMatching(/^GET \/queries lists oldest first/) });
    // The adapter still finds its queries in a workspace this small: the answers themselves come.
    expect(checkNamed(report, "query.ask").level).toBe("pass");
  });

  it("no realtime channel: a warning (the adapter polls), exit 0", async () => {
    const embedded = await workspace({ realtime: false });
    const { code, report } = await checkJson(embedded.url, ["--modes", "ask"]);
    expect(code).toBe(0);
    expect(checkNamed(report, "realtime")).toMatchObject({ level: "warn", detail: expect.stringMatching(/carry no realtime channel.*the adapter polls every answer/) });
  });

  it("unknown step shapes: steps fails, naming the shapes it would drop", async () => {
    const upstream = await deviating({ unknownSteps: true });
    const { code, report } = await checkJson(upstream.url, ["--modes", "ask"]);
    expect(code).toBe(1);
    expect(checkNamed(report, "steps")).toMatchObject({
      level: "fail",
      detail: expect.stringMatching(/^3 of 3 steps have shapes the adapter does not read and would drop from the reasoning: \{body, kind\} ×2, \{action, kind\}/),
    });
  });

  it("a wrong key: credential fails naming WORKSPACE_API_KEY, the rest is skipped, the key is never printed", async () => {
    const embedded = await workspace();
    const wrongKey = "sk-canary-wrong-key-8c1f2e";
    const output = await runCheck(["--workspace-base-url", embedded.url, "--workspace", "acme", "--api-key", wrongKey]);
    expect(output.code).toBe(1);
    expect(output.stdout).toMatch(/^✗ credential: a made-up key is refused \(401 "Invalid API key"\); the configured key: the service refused the key \(401 "Invalid API key"\) \(setting: WORKSPACE_API_KEY\)$/m);
    expect(output.stdout).toMatch(/^– create: not run: credential failed$/m);
    expect(embedded.control.calls.create).toBe(0);
    expect(output.stdout + output.stderr).not.toContain(wrongKey);
  });

  it("a slow service: calls slower than UPSTREAM_TIMEOUT_MS fail naming it", async () => {
    // Well beyond the bound: undici checks its timeouts about once a second.
    const upstream = await deviating({ delayMs: 3000 });
    const { code, report } = await checkJson(upstream.url, [], { UPSTREAM_TIMEOUT_MS: "100" });
    expect(code).toBe(1);
    expect(checkNamed(report, "health")).toMatchObject({ level: "fail", detail: "GET /health: no answer within 100 ms", setting: "UPSTREAM_TIMEOUT_MS" });
    expect(checkNamed(report, "workspace")).toMatchObject({ level: "fail", setting: "UPSTREAM_TIMEOUT_MS" });
  });

  it("a slow answer: a query outliving its mode's deadline fails naming ASK_TIMEOUT_MS", async () => {
    const embedded = await workspace({ stepDelayMs: 400 });
    const { code, report } = await checkJson(embedded.url, ["--modes", "ask"], { ASK_TIMEOUT_MS: "300" });
    expect(code).toBe(1);
    expect(checkNamed(report, "query.ask")).toMatchObject({ level: "fail", detail: expect.stringMatching(/not ended within 0\.3 s: the adapter would answer 504$/), setting: "ASK_TIMEOUT_MS" });
  });
});

describe("check's command line", () => {
  it("answers --help with its flags and the server's, and refuses bad usage with exit 2", async () => {
    const help = await runCheck(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--record DIR\s+Write every exchange of the run/);
    expect(help.stdout).toMatch(/--mode-field\s+Name of the interaction-mode field in the create body/);
    expect((await runCheck(["--nope"])).code).toBe(2);
    const noUrl = await runCheck(["--workspace", "acme"], { WORKSPACE_API_KEY: API_KEY });
    expect(noUrl).toMatchObject({ code: 2, stderr: expect.stringMatching(/--workspace-base-url/) });
    const noKey = await runCheck(["--workspace-base-url", "http://127.0.0.1:9"]);
    expect(noKey).toMatchObject({ code: 2, stderr: expect.stringMatching(/WORKSPACE_API_KEY/) });
    expect((await runCheck(["--workspace-base-url", "http://127.0.0.1:9", "--api-key", "k", "--modes", "chat"])).code).toBe(2);
    expect((await runCheck(["--workspace-base-url", "http://127.0.0.1:9", "--api-key", "k", "--mode-field", "not a name"])).code).toBe(2);
  });

  it("names a service out of reach and stops there", async () => {
    const output = await runCheck(["--workspace-base-url", "http://127.0.0.1:9", "--workspace", "acme", "--api-key", "sk-unused-key"]);
    expect(output.code).toBe(1);
    expect(output.stdout).toMatch(/^✗ health: GET \/health: could not reach the service \(ECONNREFUSED\) \(setting: WORKSPACE_BASE_URL\)$/m);
    expect(output.stdout).toMatch(/^– credential: not run: health failed$/m);
  });
});
