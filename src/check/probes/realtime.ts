import { refusalOf, originOf } from "../../upstream/realtime/allowed-hosts.js";
import type { FallbackReason } from "../../upstream/realtime/realtime-hub.js";
import { realtimeChannelOf } from "../../upstream/to-query-snapshot.js";
import { type CheckLine, checkLine } from "../check-report.js";
import type { ProbeContext } from "../probe-context.js";
import { finalOf, type QueryRun } from "./query-runs.js";

/** What each way of giving a channel up means for a person (docs/upstream-assumptions.md#realtime). */
const FALLBACKS: Record<FallbackReason, string> = {
  host_not_allowed: "its host is not allowed",
  connect_failed: "the endpoint could not be connected to",
  token_refused: "the endpoint refused the connection token (close 3500 or error 109)",
  subscribe_refused: "the endpoint refused the subscription (error 103 or like it)",
  channel_busy: "the channel was already followed",
  unrecoverable: "the stream could not be recovered from the query's since (offset and epoch)",
  disconnected: "the connection was closed for good",
  diverged: "the channel's text and the polled output disagreed",
  silent: "the channel went quiet while the query ran",
};

/**
 * The realtime channel (docs/upstream-assumptions.md#realtime), as the adapter followed it: the
 * create answers name one, the adapter may contact its host, it connects and subscribes from
 * `since`, publishes what the adapter reads, and its text ends as the polled output does. No channel
 * at all is a warning (the adapter polls); a channel the adapter cannot use, or one whose text
 * disagrees with the list, fails.
 */
export function realtimeLine(context: ProbeContext, runs: readonly QueryRun[]): CheckLine {
  if (context.settings.config.upstream.realtime === "off") return checkLine("realtime", "skip", "REALTIME=off: the adapter does not use the channel");
  const created = runs.filter((run) => run.created);
  const followed = created.filter((run) => run.created && realtimeChannelOf(run.created));
  if (followed.length === 0) {
    const partial = created.some((run) => run.created?.ws_url || run.created?.channel || run.created?.token);
    return checkLine(
      "realtime",
      "warn",
      partial
        ? "the create answers name a channel without all of ws_url, channel and since: the adapter polls every answer"
        : "the create answers carry no realtime channel (ws_url, channel, token, since): the adapter polls every answer (POLL_INTERVAL_MIN_MS to POLL_INTERVAL_MAX_MS)",
    );
  }
  const problems: { level: "fail" | "warn"; text: string; setting?: string }[] = [];
  const totals = { publications: 0, delta: 0, output: 0, step: 0, steps: 0, status: 0, ignored: 0 };
  const ignoredShapes = new Set<string>();
  const matched: string[] = [];
  let origin = "";
  for (const run of followed) {
    const observation = run.observation;
    const channel = run.created ? realtimeChannelOf(run.created) : undefined;
    if (!observation || !channel) continue;
    origin = originOf(channel.wsUrl);
    const refusal = refusalOf(channel.wsUrl, context.realtimePolicy);
    if (refusal) {
      const host = hostOf(channel.wsUrl);
      const setting = refusal.startsWith("host") ? "REALTIME_ALLOWED_HOSTS" : undefined;
      problems.push({ level: "fail", text: `${run.mode}: the channel at ${origin} is not followed: ${refusal}${setting ? ` (set REALTIME_ALLOWED_HOSTS=${host})` : ""}`, ...(setting ? { setting } : {}) });
      continue;
    }
    for (const field of ["delta", "output", "step", "steps", "status"] as const) totals[field] += observation.fields[field];
    totals.publications += observation.publications;
    totals.ignored += observation.ignored;
    for (const shape of observation.ignoredShapes) ignoredShapes.add(shape);
    const fallback = observation.fallbacks.find((reason) => reason !== "silent");
    if (fallback) {
      problems.push({ level: "fail", text: `${run.mode}: ${FALLBACKS[fallback]}` });
      continue;
    }
    if (!observation.subscribed) {
      problems.push({ level: "warn", text: `${run.mode}: never subscribed before the answer ended` });
      continue;
    }
    if (observation.publications === 0) {
      problems.push({ level: "warn", text: `${run.mode}: subscribed, but nothing was published before the answer ended` });
      continue;
    }
    if (observation.ignored === observation.publications) {
      problems.push({ level: "fail", text: `${run.mode}: ${observation.publications} publications, none the adapter reads (${[...observation.ignoredShapes].join(", ")}): it ignores them and polls` });
      continue;
    }
    const final = finalOf(run);
    if (!final || run.end !== "PROCESSED") continue;
    const text = observation.view.channelOutput;
    if (text === final.output) matched.push(run.mode);
    else if (final.output.startsWith(text)) problems.push({ level: "warn", text: `${run.mode}: the channel's text stopped ${final.output.length - text.length} characters short of the polled output` });
    else problems.push({ level: "fail", text: `${run.mode}: the channel's text and the polled output disagree from character ${firstDifference(text, final.output)} (the list wins; the channel is set aside)` });
  }
  const counts = (["delta", "output", "step", "steps", "status"] as const).filter((field) => totals[field] > 0).map((field) => `${field} ${totals[field]}`);
  const seen = `${origin}: ${totals.publications} publications${counts.length > 0 ? ` (${counts.join(", ")})` : ""}`;
  if (totals.ignored > 0 && totals.ignored < totals.publications) problems.push({ level: "warn", text: `${totals.ignored} publications of shapes the adapter ignores: ${[...ignoredShapes].join(", ")}` });
  const failed = problems.find((problem) => problem.level === "fail");
  const summary = [seen, ...problems.map((problem) => problem.text)];
  if (matched.length > 0) summary.push(`the text matches the polled output (${matched.join(", ")})`);
  else if (!followed.some((run) => run.end === "PROCESSED")) summary.push("no query ended, so the text was not compared");
  if (failed) return checkLine("realtime", "fail", summary.join("; "), failed.setting);
  return checkLine("realtime", problems.length > 0 ? "warn" : "pass", summary.join("; "));
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return url;
  }
}

function firstDifference(a: string, b: string): number {
  let index = 0;
  while (index < a.length && index < b.length && a[index] === b[index]) index += 1;
  return index;
}
