import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type RunningWorkspace, startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import { readRecording, startReplayUpstream } from "../../helpers/replay-upstream.js";
import { type CheckReport, runCheck, runCheckCli } from "../../helpers/run-check.js";
import { FIXTURE_DOCUMENTS, startAdapter } from "../../helpers/start-stack.js";

// `check --record DIR` (docs/check.md#recordings): every exchange of the run, redacted, in a form
// a test serves back as an upstream; the adapter answers from it as it did live.

const QUESTION = "How are travel expenses reimbursed?";
/** Canaries: a key and a URL's userinfo that must never be printed or recorded. */
const CANARY_KEY = "sk-canary-7f3a9c2e51b04d88";
const CANARY_USER = "canaryuser4821";
const CANARY_PASSWORD = "canary-password-93b1e0";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function workspace(): Promise<RunningWorkspace> {
  const started = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], apiKeys: [CANARY_KEY], stepDelayMs: 20 });
  cleanups.push(() => started.close());
  return started;
}

function temporaryDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "check-recording-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Records a run of the real CLI against the embedded workspace, the canary key and userinfo given. */
async function record(extra: string[]): Promise<{ dir: string; report: CheckReport; printed: string }> {
  const embedded = await workspace();
  const dir = temporaryDir();
  const withUserinfo = embedded.url.replace("http://", `http://${CANARY_USER}:${CANARY_PASSWORD}@`);
  const output = await runCheckCli(["--workspace-base-url", withUserinfo, "--workspace", "acme", "--question", QUESTION, "--modes", "ask", "--json", "--record", dir, ...extra], {
    WORKSPACE_API_KEY: CANARY_KEY,
  });
  expect(output.code, output.stdout + output.stderr).toBe(0);
  return { dir, report: JSON.parse(output.stdout) as CheckReport, printed: output.stdout + output.stderr };
}

/** Asks the adapter, in front of a replay of the recording, the question the check asked it live. */
async function askReplay(dir: string, question: string) {
  const replay = await startReplayUpstream(readRecording(dir));
  cleanups.push(() => replay.close());
  const adapter = await startAdapter(replay.url, { DEFAULT_WORKSPACE: "acme" });
  cleanups.push(() => adapter.close());
  const response = await fetch(`${adapter.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: "Bearer any-key-the-replay-ignores", "service-workspace": "acme", "content-type": "application/json" },
    body: JSON.stringify({ model: "ask", messages: [{ role: "user", content: question }] }),
  });
  expect(response.status).toBe(200);
  const message = ((await response.json()) as any).choices[0].message;
  return { message, replay };
}

describe("check --record", () => {
  it("with --record-content replays as an upstream: the adapter answers the same question with the same content, sources and citations", async () => {
    const { dir, report, printed } = await record(["--record-content"]);
    const live = report.answers?.ours;
    expect(live?.sources.length).toBeGreaterThan(0);
    const text = readFileSync(join(dir, "recording.json"), "utf8");
    expect(text).toContain("reimburs");
    const { message, replay } = await askReplay(dir, report.answers?.question as string);
    expect(message.content).toBe(live?.content);
    expect(message.sources).toEqual(live?.sources);
    expect(message.annotations).toEqual(live?.annotations);
    expect(replay.unmatched).toEqual([]);
    // It answered from the adapter's own exchanges of the run, channel and all.
    expect(new Set(replay.served.map((exchange) => exchange.probe))).toEqual(new Set(["adapter-answer"]));
    for (const secret of [CANARY_KEY, CANARY_USER, CANARY_PASSWORD]) {
      expect(printed).not.toContain(secret);
      expect(text).not.toContain(secret);
    }
  }, 60_000);

  it("without it keeps no content: placeholders of the same shape, which the adapter answers from with the same sources and citation spans", async () => {
    const { dir, report, printed } = await record([]);
    const text = readFileSync(join(dir, "recording.json"), "utf8");
    const recording = readRecording(dir);
    expect(recording.content).toBe("redacted");
    for (const word of ["reimburs", "travel", "expenses.txt", "handbook"]) expect(text.toLowerCase()).not.toContain(word);
    for (const secret of [CANARY_KEY, CANARY_USER, CANARY_PASSWORD]) {
      expect(printed).not.toContain(secret);
      expect(text).not.toContain(secret);
    }
    // Credentials are labels, tokens are gone.
    const authorizations = new Set(recording.exchanges.map((exchange) => exchange.request.headers.authorization));
    expect(authorizations).toEqual(new Set([undefined, "Bearer <credential>", "Bearer <made-up-credential>"]));
    expect(text).not.toMatch(/"(?:subscription_)?token": "(?!<)/);
    const live = report.answers?.ours;
    const { message } = await askReplay(dir, report.answers?.question as string);
    expect(message.content.length).toBe(live?.content.length);
    expect(message.content.replace(/\p{L}/gu, "x")).toBe(live?.content.replace(/\p{L}/gu, "x"));
    expect(message.sources.length).toBe(live?.sources.length);
    const spans = (annotations: any[]) => annotations.map((annotation) => [annotation.url_citation.start_index, annotation.url_citation.end_index]);
    expect(spans(message.annotations)).toEqual(spans(live?.annotations as any[]));
  }, 60_000);

  it("replays the run itself: check against its own recording reports what it did live", async () => {
    const { dir, report } = await record(["--record-content"]);
    const replay = await startReplayUpstream(readRecording(dir));
    cleanups.push(() => replay.close());
    const output = await runCheck(["--workspace-base-url", replay.url, "--workspace", "acme", "--question", QUESTION, "--modes", "ask", "--json"], { WORKSPACE_API_KEY: "sk-replayed-key" });
    const replayed = JSON.parse(output.stdout) as CheckReport;
    const levels = (checks: CheckReport["checks"]) => checks.map((check) => `${check.name}:${check.level}`);
    expect(levels(replayed.checks)).toEqual(levels(report.checks));
  }, 60_000);
});
