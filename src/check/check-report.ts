// What `check` reports (docs/check.md#the-report): one line per check for a person, and the same
// lines as JSON for a script. A check passes, warns (it holds with a caveat, or could not be seen),
// fails (an assumption of the adapter does not hold: exit 1), or was skipped.

/** How a check came out: only `fail` makes the run fail. */
export type CheckLevel = "pass" | "warn" | "fail" | "skip";

/** One check's outcome: what was seen, and the setting to change when there is one. */
export interface CheckLine {
  name: string;
  level: CheckLevel;
  /** False only for a failed check (a warning or a skip is not a failure). */
  ok: boolean;
  detail: string;
  /** The variable (or flag) to change, when changing one would help. */
  setting?: string;
}

/** A check line; `setting` names the variable the detail asks to change. */
export function checkLine(name: string, level: CheckLevel, detail: string, setting?: string): CheckLine {
  return { name, level, ok: level !== "fail", detail, ...(setting ? { setting } : {}) };
}

/** How many checks came out each way. */
export interface CheckSummary {
  passed: number;
  warnings: number;
  failed: number;
  skipped: number;
}

/** Counts the lines by level. */
export function summarize(lines: readonly CheckLine[]): CheckSummary {
  const count = (level: CheckLevel) => lines.filter((line) => line.level === level).length;
  return { passed: count("pass"), warnings: count("warn"), failed: count("fail"), skipped: count("skip") };
}

/** 0 when every assumption holds, 1 when any fails (usage errors are 2, before any check runs). */
export function exitCodeOf(lines: readonly CheckLine[]): 0 | 1 {
  return lines.some((line) => line.level === "fail") ? 1 : 0;
}

const SYMBOL: Record<CheckLevel, string> = { pass: "✓", warn: "!", fail: "✗", skip: "–" };

/** One line for a person: `✗ create: … (setting: MODE_FIELD)`. */
export function formatLine(line: CheckLine): string {
  return `${SYMBOL[line.level]} ${line.name}: ${line.detail}${line.setting ? ` (setting: ${line.setting})` : ""}`;
}

/** The closing line: `9 passed, 1 warning, 1 failed`. */
export function formatSummary(summary: CheckSummary): string {
  const parts = [`${summary.passed} passed`];
  if (summary.warnings > 0) parts.push(`${summary.warnings} warning${summary.warnings === 1 ? "" : "s"}`);
  parts.push(`${summary.failed} failed`);
  if (summary.skipped > 0) parts.push(`${summary.skipped} skipped`);
  return parts.join(", ");
}
