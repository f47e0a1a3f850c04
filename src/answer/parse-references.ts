import { toPage } from "../core/source-record.js";
import { emptySource, type SourceRecord } from "../core/source-record.js";

/** A numbered entry of a references section (`[1] handbook.pdf, p. 4 — Employee handbook`). */
export interface ReferenceEntry {
  number: number;
  source: SourceRecord;
}

/** Where the references section closing an output starts, and what it lists. */
export interface ReferencesSection {
  /** UTF-16 offset of the section heading; markers at or after it are not citations. */
  start: number;
  entries: ReferenceEntry[];
}

// Every run of white space is followed by something it cannot be confused with, so a long line
// that is almost a heading fails in linear time (adjacent \s* groups once made "Sources" followed
// by a few thousand spaces take minutes: catastrophic backtracking).
const HEADING =
  /^\s{0,3}(?:#{1,6}\s*)?(?:(?:\*\*|__)\s*)?(?:sources|references|citations|bibliography|works cited)(?:\s*:)?(?:\s*(?:\*\*|__))?(?:\s*:)?\s*$/i;
/** Lines longer than this are prose, not entries of a references list (and not worth a regex scan). */
const MAX_ENTRY_LENGTH = 1000;
const NUMBERED_BRACKET = /^\[\^?(\d{1,4})\]:?\s*(.*)$/;
const NUMBERED_LIST = /^(\d{1,4})[.)]\s+(.*)$/;
const BULLET = /^[-*•]\s+/;
/** An entry that is a Markdown link: `[Employee handbook](https://…/handbook.pdf) p. 4`. */
const LINK_ENTRY = /^\[([^\]]+)\]\(([^)\s]+)\)\s*(.*)$/;
/** Quotes and emphasis around a title (the end also loses a full stop). */
const QUOTES = /^["“'*_]+|["”'*_.]+$/g;
const LEADING_QUOTES = "\"“'*_";
const TRAILING_QUOTES = "\"”'*_.";
/** A filename: a name with a letter-led extension, optionally behind folders. */
export const FILENAME = /(?:[\w\-.]+\/)*[\w\-.() ]*[\w\-)]\.[A-Za-z][A-Za-z0-9]{0,7}\b/;
/** `p. 4`, `pp. 4-5`, `page 4`, `pg 4`, `#page=4`. */
export const PAGE = /(?:\b(?:pp?|pages?|pg)\.?\s*|#page=)(\d{1,9})/i;

/**
 * Finds a references section closing the output (docs/upstream-assumptions.md#sources-and-citations): a heading line
 * such as `Sources:` followed only by entry lines to the end. Returns null when there is none.
 */
export function parseReferences(output: string): ReferencesSection | null {
  // From the last line up: most outputs have no heading, and a long one need not be split whole.
  for (let end = output.length; end >= 0; ) {
    const start = output.lastIndexOf("\n", end - 1) + 1;
    if (end - start <= MAX_ENTRY_LENGTH && HEADING.test(output.slice(start, end))) {
      const entries = parseEntries(output.slice(end + 1).split("\n"));
      return entries && entries.length > 0 ? { start, entries } : null;
    }
    if (start === 0) break;
    end = start - 1;
  }
  return null;
}

/** Reads a reference entry's text (`handbook.pdf, p. 4 — Employee handbook`) into a source. */
export function parseReferenceText(text: string): SourceRecord {
  const source = emptySource();
  const link = text.startsWith("[") ? LINK_ENTRY.exec(text) : null;
  const cleaned = link ? `${link[2]?.split("/").pop() ?? ""} — ${link[1]} ${link[3] ?? ""}` : text;
  const [locator = "", ...rest] = cleaned.split(/\s+[—–-]\s+|\s*:\s+(?=[A-Z"“])/);
  const filename = FILENAME.exec(locator)?.[0]?.trim() ?? null;
  const page = PAGE.exec(locator)?.[1];
  source.filename = filename;
  source.page = page === undefined ? null : toPage(page);
  const title = rest.join(" — ").trim() || (filename ? "" : locator.trim());
  source.title = title ? stripQuotes(title) : null;
  return source;
}

function parseEntries(lines: string[]): ReferenceEntry[] | null {
  const entries: ReferenceEntry[] = [];
  for (const raw of lines) {
    if (raw.length > MAX_ENTRY_LENGTH) return null;
    const trimmed = raw.trim();
    const bulleted = BULLET.test(trimmed);
    const line = bulleted ? trimmed.replace(BULLET, "") : trimmed;
    if (!line) continue;
    const numbered = NUMBERED_BRACKET.exec(line) ?? NUMBERED_LIST.exec(line);
    // A plain line counts only when it names a file: prose after a "Sources:" line is not a list.
    if (!numbered && !bulleted && !FILENAME.test(line)) return null;
    const number = numbered ? Number.parseInt(numbered[1] ?? "", 10) : entries.length + 1;
    const text = (numbered ? numbered[2] : line)?.trim() ?? "";
    if (!text) return null;
    entries.push({ number, source: parseReferenceText(text) });
  }
  return entries;
}

function stripQuotes(text: string): string {
  // Most titles neither start nor end with one: the scan of the whole title is then not needed.
  if (!LEADING_QUOTES.includes(text.charAt(0) || "\n") && !TRAILING_QUOTES.includes(text.charAt(text.length - 1) || "\n")) return text.trim();
  return text.replace(QUOTES, "").trim();
}
