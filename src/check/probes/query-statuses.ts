import type { Mode } from "../../core/modes.js";
import { GatewayTimeoutError } from "../../errors/adapter-error.js";
import { type CheckLine, checkLine } from "../check-report.js";
import { describeFailure } from "../describe-failure.js";
import type { ProbeContext } from "../probe-context.js";
import { finalOf, type QueryRun } from "./query-runs.js";

/** The statuses of the interface (docs/upstream-assumptions.md#terminal-states-and-deadlines). */
const KNOWN = new Set(["PENDING", "PROCESSING", "PROCESSED", "FAILED"]);
/** Statuses a service might mean as an end, which the adapter does not take for one. */
const LOOKS_FINAL = /^(?:COMPLETED?|DONE|SUCCEEDED|SUCCESS|FINISHED|ERROR|ERRORED|CANCELL?ED)$/i;

/** The variable of each mode's deadline. */
const DEADLINE_SETTING: Record<Mode, string> = { ask: "ASK_TIMEOUT_MS", reason: "REASON_TIMEOUT_MS", build: "BUILD_TIMEOUT_MS" };

/**
 * One mode's query from create to end (docs/upstream-assumptions.md#terminal-states-and-deadlines):
 * the statuses the list showed in turn, the time to the first step and to the answer as the adapter
 * would have shown them, against the mode's deadline. A query that outlives the deadline, never
 * shows in the list, ends FAILED or in a status the adapter does not know fails.
 */
export function queryLine(context: ProbeContext, run: QueryRun): CheckLine {
  const name = `query.${run.mode}`;
  const deadlineMs = context.settings.config.upstream.queryTimeoutMs[run.mode];
  const setting = DEADLINE_SETTING[run.mode];
  const statuses = statusesOf(run);
  const path = statuses.join(" → ") || "(no status)";
  const unknown = statuses.filter((status) => !KNOWN.has(status));
  const unknownNote = unknown.length > 0 ? `; ${unknown.join(", ")} ${unknown.length === 1 ? "is" : "are"} not among the interface's statuses: the adapter reads ${unknown.length === 1 ? "it" : "them"} as PROCESSING` : "";
  if (run.error !== null) {
    if (run.error instanceof GatewayTimeoutError) {
      if (run.seen.length === 0) {
        return checkLine(name, "fail", `never found in the first ${context.settings.config.upstream.maxListPages} pages of GET /queries within ${seconds(deadlineMs)}: the adapter would answer 504`, "MAX_LIST_PAGES");
      }
      const final = unknown.find((status) => LOOKS_FINAL.test(status));
      const why = final ? `the service says ${final}, which the adapter does not take for an end (it waits for PROCESSED or FAILED)` : "the adapter would answer 504";
      return checkLine(name, "fail", `${path}, not ended within ${seconds(deadlineMs)}: ${why}`, final ? undefined : setting);
    }
    const failure = describeFailure(run.error, "GET /queries", context.settings.config.upstream.timeoutMs);
    return checkLine(name, "fail", `${path}; polling failed: ${failure.detail}`, failure.setting);
  }
  const final = finalOf(run);
  if (run.end === "FAILED") return checkLine(name, "fail", `${path}: the query ended FAILED ("${shorten(final?.output ?? "")}"); the adapter would answer 502`);
  const firstStep = run.shown.find(({ snapshot }) => snapshot.steps.length > 0)?.at;
  const answered = run.shown.at(-1)?.at ?? 0;
  const timing = `${firstStep === undefined ? "no step" : `first step after ${seconds(firstStep)}`}, the answer after ${seconds(answered)} (${setting}: ${seconds(deadlineMs)})`;
  if (answered > deadlineMs / 2) return checkLine(name, "warn", `${path}; ${timing}: more than half the deadline${unknownNote}`, setting);
  return checkLine(name, unknown.length > 0 ? "warn" : "pass", `${path}; ${timing}${unknownNote}`);
}

/** The statuses a query went through, as the service wrote them: the create answer's, then each list item's that differed. */
export function statusesOf(run: QueryRun): string[] {
  const raw = [run.created?.status, ...run.seen.map(({ item }) => item.status)].map((status) => status ?? "(none)");
  return raw.filter((status, index) => index === 0 || status !== raw[index - 1]);
}

/** Milliseconds as a person reads them: `0.4 s`, `12 s`. */
export function seconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

function shorten(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > 160 ? `${trimmed.slice(0, 160)}…` : trimmed;
}
