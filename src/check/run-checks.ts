import { randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Agent } from "undici";
import { hostPolicy } from "../upstream/realtime/allowed-hosts.js";
import { createTransport } from "../upstream/transport.js";
import { createWorkspaceClient } from "../upstream/workspace-client.js";
import { type CheckLine, checkLine } from "./check-report.js";
import type { CheckSettings } from "./check-settings.js";
import type { ProbeContext } from "./probe-context.js";
import { type AnswerSummary, probeChatCompletions } from "./probes/chat-completions.js";
import { createLine } from "./probes/create.js";
import { probeCredential } from "./probes/credential.js";
import { probeHealth } from "./probes/health.js";
import { probeListOrder, probePaging } from "./probes/list-order.js";
import { markersLine } from "./probes/marker-shapes.js";
import { createRuns, followRuns } from "./probes/query-runs.js";
import { queryLine } from "./probes/query-statuses.js";
import { realtimeLine } from "./probes/realtime.js";
import { sourcesLine } from "./probes/source-shapes.js";
import { stepsLine } from "./probes/step-shapes.js";
import { probeWorkspace } from "./probes/workspace.js";
import { RecordingTap } from "./recording/recording-tap.js";
import type { Secrets } from "./recording/redact-secrets.js";

/** What a run found: its lines in order, the labelled queries it made, the side-by-side answers, where the recording went. */
export interface CheckRun {
  lines: CheckLine[];
  queries: { mode: string; id: string }[];
  answers: { question: string; ours: AnswerSummary | null; service: AnswerSummary | null } | null;
  recording: string | null;
}

/** What the run tells as it goes: each line when its check ends, and notes before it acts. */
export interface CheckListener {
  line(line: CheckLine): void;
  note(text: string): void;
}

/**
 * Runs every check in order (docs/check.md#what-it-checks): the service's health, the key, the
 * workspace; then, unless `--read-only`, one labelled query per mode (said before it is asked),
 * followed to its end by the adapter's own watcher; the list's order and paging; the shapes of
 * statuses, steps, sources and markers; the realtime channel; and the adapter's answer beside the
 * service's chat completion. A check whose prerequisite failed is reported skipped. `secrets`
 * holds what may never be printed; the run adds its own (the made-up key, tokens it meets).
 */
export async function runChecks(settings: CheckSettings, listener: CheckListener, secrets: Secrets): Promise<CheckRun> {
  const madeUpKey = `check-made-up-${randomBytes(12).toString("hex")}`;
  secrets.add(madeUpKey);
  const { upstream } = settings.config;
  const policy = hostPolicy(settings.baseUrl, upstream.realtimeAllowedHosts);
  // A folder that cannot be written stops the run before it asks anything.
  if (settings.record) await mkdir(settings.record.dir, { recursive: true });
  const tap = settings.record
    ? await RecordingTap.start({
      target: settings.baseUrl,
      credentials: { configured: settings.apiKey, madeUp: madeUpKey },
      secrets,
      keepContent: settings.record.keepContent,
      modeField: upstream.modeField,
      policy,
    })
    : null;
  const upstreamUrl = tap?.url ?? settings.baseUrl;
  const { timeoutMs, connectTimeoutMs, maxResponseBytes } = upstream;
  // One pool for the client and the raw calls, bounded as the adapter's are.
  const dispatcher = new Agent({
    connections: 16,
    connect: { timeout: connectTimeoutMs },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  const bounds = { baseUrl: upstreamUrl, timeoutMs, connectTimeoutMs, maxResponseBytes, dispatcher };
  const context: ProbeContext = {
    settings,
    upstreamUrl,
    client: createWorkspaceClient(bounds),
    transport: createTransport(bounds),
    madeUpKey,
    // With the tap, the channels the adapter may follow are relayed through it on loopback.
    realtimePolicy: tap ? hostPolicy(upstreamUrl, upstream.realtimeAllowedHosts.length > 0 ? [...upstream.realtimeAllowedHosts, "127.0.0.1"] : []) : policy,
    now: () => performance.now(),
    note: (text) => listener.note(text),
    phase: (name) => {
      if (tap) tap.probe = name;
    },
  };
  const lines: CheckLine[] = [];
  const report = (line: CheckLine) => {
    lines.push(line);
    listener.line(line);
  };
  const result: CheckRun = { lines, queries: [], answers: null, recording: null };
  try {
    await probeAll(context, report, result);
  } finally {
    const reported = new Set(lines.map((line) => line.name));
    for (const name of checkNames(settings)) if (!reported.has(name)) report(checkLine(name, "skip", skipReason(settings, lines)));
    await context.client.close();
    await context.transport.close();
    await dispatcher.close();
    if (tap && settings.record) {
      await tap.close();
      const path = join(settings.record.dir, "recording.json");
      // The last net: any secret still in the text (a copy in some unforeseen place) goes too.
      await writeFile(path, `${secrets.scrub(JSON.stringify(tap.recording(), null, 2))}\n`);
      result.recording = path;
    }
  }
  return result;
}

async function probeAll(context: ProbeContext, report: (line: CheckLine) => void, result: CheckRun): Promise<void> {
  const { settings } = context;
  const health = await probeHealth(context);
  report(health.line);
  if (!health.reachable) return;
  const credential = await probeCredential(context);
  report(credential.line);
  if (!credential.accepted) return;
  const workspace = await probeWorkspace(context, credential.workspaces);
  report(workspace.line);
  if (!workspace.usable) return;
  if (settings.readOnly) {
    report(await probePaging(context));
    return;
  }
  const count = settings.modes.length;
  context.note(
    `check: now asking ${count} labelled quer${count === 1 ? "y" : "ies"} in workspace '${settings.workspace}' (${settings.modes.join(", ")}), ` +
      "then one through the adapter and one through the service's /v1/chat/completions; each starts with \"[workspace-openai-adapter check\". " +
      "--read-only asks none.",
  );
  const { runs, refusal } = await createRuns(context);
  result.queries = runs.flatMap((run) => (run.created ? [{ mode: run.mode, id: run.created.id }] : []));
  report(createLine(context, runs, refusal));
  if (runs.length === 0) return;
  // The order right after the creates, as a poller's first list call would see it; then the queries to their ends.
  const order = await probeListOrder(context, runs);
  context.phase("queries");
  await followRuns(context, runs);
  report(order);
  // Paging needs two queries: with one mode asked, the adapter's own answer makes the second.
  const pagingNow = runs.length >= 2 || refusal !== null;
  if (pagingNow) report(await probePaging(context));
  for (const run of runs) report(queryLine(context, run));
  // Shapes are read from answers: a query that never ended has none to read.
  const answered = runs.filter((run) => run.end === "PROCESSED");
  if (answered.length > 0) {
    report(stepsLine(answered));
    report(sourcesLine(answered));
    report(markersLine(answered));
  } else {
    for (const name of ["steps", "sources", "markers"]) report(checkLine(name, "skip", "not run: no query ended with an answer"));
  }
  report(realtimeLine(context, runs));
  if (refusal) return;
  const chat = await probeChatCompletions(context);
  for (const line of chat.lines) report(line);
  result.answers = { question: chat.question, ours: chat.ours, service: chat.service };
  if (!pagingNow) report(await probePaging(context));
}

/** Every check of a run, in order: the ones not reported are listed as skipped. */
function checkNames(settings: CheckSettings): string[] {
  return [
    "health",
    "credential",
    "workspace",
    "create",
    "list-order",
    "list-paging",
    ...settings.modes.map((mode) => `query.${mode}`),
    "steps",
    "sources",
    "markers",
    "realtime",
    "adapter-answer",
    "service-chat-completions",
  ];
}

function skipReason(settings: CheckSettings, lines: readonly CheckLine[]): string {
  const failed = lines.find((line) => line.level === "fail");
  if (failed) return `not run: ${failed.name} failed`;
  return settings.readOnly ? "not run: --read-only asks no query" : "not run";
}
