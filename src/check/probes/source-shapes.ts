import { parseReferences } from "../../answer/parse-references.js";
import { normalizeSources } from "../../upstream/normalize-sources.js";
import { type CheckLine, checkLine } from "../check-report.js";
import { shapeOf } from "./channel-observer.js";
import { finalOf, type QueryRun } from "./query-runs.js";

/** Where structured sources may be (docs/upstream-assumptions.md#sources-and-citations). */
const SOURCE_KEYS = ["sources", "citations", "documents", "references"] as const;
/** A references heading, loosely: one the adapter's parser did not take means entries it cannot read. */
const LOOSE_HEADING = /^\s{0,3}(?:#{1,6}\s*)?(?:\*\*|__)?\s*(?:sources|references|citations|bibliography|works cited)\b[^\n]{0,40}$/im;

/**
 * The shapes of sources (docs/upstream-assumptions.md#sources-and-citations), read as the adapter
 * reads them: structured arrays on the query, its list items and its steps (normalize-sources.ts),
 * and a references section closing the output (parse-references.ts). An entry it cannot read, or a
 * references heading whose entries it cannot parse, is dropped: that fails.
 */
export function sourcesLine(runs: readonly QueryRun[]): CheckLine {
  const parts: string[] = [];
  const dropped: string[] = [];
  let found = 0;
  for (const run of runs) {
    const final = finalOf(run);
    if (!final) continue;
    const containers = [run.created, run.seen.at(-1)?.item, ...final.steps];
    const structured = new Map<string, number>();
    for (const container of containers) {
      if (typeof container !== "object" || container === null) continue;
      for (const key of SOURCE_KEYS) {
        const value = (container as Record<string, unknown>)[key];
        if (value === undefined || value === null) continue;
        if (!Array.isArray(value)) {
          dropped.push(`${run.mode}: '${key}' is ${shapeOf(value)}, not an array`);
          continue;
        }
        for (const entry of value) {
          if (normalizeSources([entry]).length > 0) structured.set(key, (structured.get(key) ?? 0) + 1);
          else dropped.push(`${run.mode}: ${key} entry ${shapeOf(entry)}`);
        }
      }
    }
    const references = parseReferences(final.output);
    const counted = [...structured].map(([key, count]) => `${count} structured (${key})`);
    if (references) counted.push(`${references.entries.length} in its references section`);
    else if (LOOSE_HEADING.test(final.output)) dropped.push(`${run.mode}: a references section whose entries the adapter cannot read ("${headingOf(final.output)}" …)`);
    found += [...structured.values()].reduce((sum, count) => sum + count, 0) + (references?.entries.length ?? 0);
    parts.push(`${run.mode}: ${counted.join(", ") || "none"}`);
  }
  if (dropped.length > 0) return checkLine("sources", "fail", `the adapter would drop ${dropped.length}: ${dropped.slice(0, 5).join("; ")}${dropped.length > 5 ? "; …" : ""}`);
  if (found === 0) return checkLine("sources", "warn", `no answer named a source the adapter can read (${parts.join("; ")}): its answers will carry no sources`);
  return checkLine("sources", "pass", `${parts.join("; ")}; none dropped`);
}

function headingOf(output: string): string {
  return (LOOSE_HEADING.exec(output)?.[0] ?? "").trim().slice(0, 40);
}
