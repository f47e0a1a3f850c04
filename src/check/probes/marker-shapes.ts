import { citeSources, maskCode } from "../../answer/cite-sources.js";
import { codePointOffsets } from "../../answer/code-points.js";
import { parseReferences } from "../../answer/parse-references.js";
import { type CheckLine, checkLine } from "../check-report.js";
import { finalOf, type QueryRun } from "./query-runs.js";

/** Anything that looks like a citation marker, loosely: brackets, footnotes, lenticular brackets (not links, not definitions). */
const LOOSE_MARKER = /【[^】\n]{1,300}】|\[\^\d{1,4}\](?!:)|\[([^[\]\n]{1,300})\](?![(:[])/g;
/** What a bracket's text must look like to be meant as a citation: numbers, a file name, or a word such as `source`. */
const CITATION_LIKE = /^\s*\d{1,4}(?:\s*[,;–-]\s*\d{1,4})*\s*$|\.[A-Za-z][A-Za-z0-9]{1,7}\b|\b(?:source|sources|doc|document|ref|reference|cite|citation)\b|†/i;

/**
 * The citation markers of each answer (docs/upstream-assumptions.md#sources-and-citations), read as
 * the adapter reads them (cite-sources.ts): every marker-like bracket must turn into a citation of
 * a source. One that points at nothing (a number without its source, a name the adapter does not
 * know) is left as text, its citation lost: that fails, naming it.
 */
export function markersLine(runs: readonly QueryRun[]): CheckLine {
  const parts: string[] = [];
  const dropped: string[] = [];
  let markers = 0;
  for (const run of runs) {
    const final = finalOf(run);
    if (!final) continue;
    const { output } = final;
    const { citations } = citeSources(output, final.sources);
    const cited = new Set(citations.map((citation) => citation.start));
    const body = maskCode(output.slice(0, parseReferences(output)?.start ?? output.length));
    // An escaped bracket (`\[`) is Markdown for a literal one: not meant as a marker.
    const found = [...body.matchAll(LOOSE_MARKER)].filter((match) => body[match.index - 1] !== "\\" && (match[1] === undefined || CITATION_LIKE.test(match[1])));
    const starts = codePointOffsets(output, found.map((match) => match.index));
    const forms = new Set<string>();
    found.forEach((match, index) => {
      if (cited.has(starts[index] as number)) forms.add(formOf(match[0]));
      else dropped.push(`${match[0]} (${run.mode})`);
    });
    markers += found.length;
    parts.push(`${run.mode}: ${found.length}${forms.size > 0 ? ` ${[...forms].join(" ")}` : ""}`);
  }
  if (dropped.length > 0) {
    const shown = [...new Set(dropped)].slice(0, 6).join(", ");
    return checkLine("markers", "fail", `${dropped.length} of ${markers} markers cite nothing the adapter can find, and would stay plain text: ${shown}`);
  }
  if (markers === 0) return checkLine("markers", "warn", "no answer had a citation marker: the adapter's answers will have no citations");
  return checkLine("markers", "pass", `${parts.join("; ")}: every marker cites a source`);
}

/** A marker's form for a person: `[n]`, `[^n]`, `[file]`, `【…】`. */
function formOf(marker: string): string {
  if (marker.startsWith("【")) return "【…†file】";
  if (marker.startsWith("[^")) return "[^n]";
  return /^\[\s*\d/.test(marker) ? "[n]" : "[file]";
}
