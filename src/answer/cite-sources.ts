import type { Citation } from "./answer-events.js";
import { codePointOffsets } from "./code-points.js";
import { toPage } from "../core/source-record.js";
import { FILENAME, PAGE, parseReferences } from "./parse-references.js";
import { type CitedSource, mergeSource, type SourceRecord, sourceKey } from "../core/source-record.js";

/** The citations of one answer: markers over the content, and every source with `cited`. */
export interface Citations {
  citations: Citation[];
  sources: CitedSource[];
}

/** Extensions a bracketed name must have to count as a citation when no source names it. */
export const DOCUMENT_EXTENSIONS = new Set(
  "pdf md markdown mdx txt text rst adoc docx doc odt rtf pptx ppt odp key xlsx xls ods csv tsv html htm xml json jsonl yaml yml eml msg epub pages numbers tex ipynb".split(
    " ",
  ),
);

// One pass over the body finds every marker form of docs/upstream-assumptions.md#sources-and-citations:
// 【…†handbook.pdf】, [^1] (not a footnote definition), and [...] that is neither a link,
// a definition nor a reference-style link; the bracket's text is classified afterwards.
const MARKER = /【([^】\n]{1,300})】|\[\^(\d{1,4})\](?!:)|\[([^[\]\n]{1,300})\](?![(:[])/g;
const NUMBER_LIST = /^\s*\d{1,4}(?:\s*(?:[,;]|[-–])\s*\d{1,4})*\s*$/;
const SINGLE_NUMBER = /^\d{1,4}$/;
const MAX_RANGE = 50;

/**
 * Finds the citations of an answer (docs/upstream-assumptions.md#sources-and-citations). `content` is the final text;
 * `structured` the sources the upstream listed. Each marker becomes one citation per source it
 * names, spanning the marker in code points (end exclusive) shifted by `offset`; a source with at
 * least one marker pointing at it has `cited: true`.
 */
export function citeSources(content: string, structured: SourceRecord[], offset = 0): Citations {
  const list = new SourceList();
  const structuredIndexes = structured.map((source) => list.add(source));
  const references = parseReferences(content);
  const byNumber = new Map<number, number>();
  for (const entry of references?.entries ?? []) byNumber.set(entry.number, list.add(entry.source));
  // A number marker points into the references section when the output has one, else at a structured source by position.
  const numbered = references ? byNumber : structuredIndexes;

  const body = maskCode(content.slice(0, references?.start ?? content.length));
  // Each marker that names a source: its span (UTF-16 start and end, in turn) and the sources it names.
  const spans: number[] = [];
  const targetsOf: number[][] = [];
  for (const match of body.matchAll(MARKER)) {
    const [text, lenticular, footnote, bracket] = match;
    let targets: number[] = [];
    if (lenticular !== undefined) targets = list.resolveName(lenticular.split("†").pop() ?? "", null);
    else if (footnote !== undefined) targets = resolveNumbers(footnote, numbered);
    else if (bracket !== undefined && NUMBER_LIST.test(bracket)) targets = resolveNumbers(bracket, numbered);
    else if (bracket !== undefined) targets = resolveNames(bracket, list);
    if (targets.length > 0) {
      spans.push(match.index, match.index + text.length);
      targetsOf.push(targets);
    }
  }

  const offsets = codePointOffsets(content, spans);
  const citations: Citation[] = [];
  const cited = new Array<boolean>(list.records.length).fill(false);
  for (let index = 0; index < targetsOf.length; index += 1) {
    const start = (offsets[2 * index] ?? 0) + offset;
    const end = (offsets[2 * index + 1] ?? 0) + offset;
    // One citation per name a marker points at (two sections of one file are one citation).
    const first = citations.length;
    for (const target of targetsOf[index] as number[]) {
      cited[target] = true;
      const name = list.displayName(target);
      if (namedSince(citations, first, name)) continue;
      citations.push({ source: target, filename: name, start, end });
    }
  }
  const sources = list.records.map(({ filename, title, page, snippet }, index): CitedSource => {
    return { filename, title, page, snippet, cited: cited[index] === true };
  });
  return { citations, sources };
}

/** The sources numbers point at (`1, 3`, `2-4`): through the references section's numbers, or by position. */
function resolveNumbers(text: string, numbered: ReadonlyMap<number, number> | readonly number[]): number[] {
  const targets: number[] = [];
  for (const number of expandNumbers(text)) {
    const target = numbered instanceof Map ? numbered.get(number) : (numbered as readonly number[])[number - 1];
    if (target !== undefined && !targets.includes(target)) targets.push(target);
  }
  return targets;
}

/** The sources a bracket of names points at (`handbook.pdf, p. 4; faq.md`): none unless every part names a file. */
function resolveNames(text: string, list: SourceList): number[] {
  const parts = text.split(/\s*;\s*/);
  const parsed = parts.map(parseNameMarker);
  if (parsed.some((part) => part === null)) return [];
  return parsed.flatMap((part) => (part ? list.resolveName(part.filename, part.page) : []));
}

/** Whether `citations` from `first` on already name `name`. */
function namedSince(citations: readonly Citation[], first: number, name: string): boolean {
  for (let index = first; index < citations.length; index += 1) if (citations[index]?.filename === name) return true;
  return false;
}

/** The sources of one answer, merged by document and page, in first-seen order. */
class SourceList {
  readonly records: SourceRecord[] = [];
  private readonly byKey = new Map<string, number[]>();

  /**
   * Adds a source, merged into a known one for the same document and page whose title does not
   * disagree (two sections of one file stay two sources); returns its index.
   */
  add(source: SourceRecord): number {
    const key = sourceKey(source);
    const same = this.byKey.get(key);
    for (const known of same ?? []) {
      const title = this.records[known]?.title;
      if (!title || !source.title || title.toLowerCase() === source.title.toLowerCase()) {
        this.records[known] = mergeSource(this.records[known] as SourceRecord, source);
        return known;
      }
    }
    const index = this.records.push(source) - 1;
    if (same) same.push(index);
    else this.byKey.set(key, [index]);
    return index;
  }

  /**
   * Sources a name marker points at: known sources of that filename or title (of that page, when
   * the marker names one); else a new source, when the name has a document extension.
   */
  resolveName(rawName: string, page: number | null): number[] {
    const name = rawName.trim();
    const lower = name.toLowerCase();
    const matches: number[] = [];
    this.records.forEach((record, index) => {
      if (record.filename?.toLowerCase() === lower || record.title?.toLowerCase() === lower)
        matches.push(index);
    });
    if (page === null && matches.length > 0) return matches;
    const samePage = matches.filter((index) => this.records[index]?.page === page);
    if (samePage.length > 0) return samePage;
    const known = matches.length > 0 ? this.records[matches[0] as number] : undefined;
    if (!known && !DOCUMENT_EXTENSIONS.has(lower.split(".").pop() ?? "")) return [];
    const filename = known ? known.filename : name;
    return [this.add({ filename, title: known?.title ?? null, page, snippet: null })];
  }

  displayName(index: number): string {
    const record = this.records[index];
    return record?.filename ?? record?.title ?? "source";
  }
}

/** A marker that names a file (`handbook.pdf`, `handbook.pdf, p. 4`, `handbook.pdf#page=4`): its filename and page; null otherwise. */
export function parseNameMarker(text: string): { filename: string; page: number | null } | null {
  const filename = new RegExp(`^\\s*(${FILENAME.source})`).exec(text)?.[1];
  if (!filename) return null;
  const rest = text.slice(text.indexOf(filename) + filename.length);
  const page = PAGE.exec(rest);
  const leftover = page ? rest.replace(page[0], "") : rest;
  if (!/^[\s,;:()–-]*$/.test(leftover)) return null;
  return { filename: filename.trim(), page: page ? toPage(page[1]) : null };
}

/** `1, 3` → [1, 3]; `2-4` → [2, 3, 4] (bounded, so `[1-99999]` cannot cost much). */
function expandNumbers(text: string): number[] {
  if (SINGLE_NUMBER.test(text)) return [Number.parseInt(text, 10)];
  const numbers: number[] = [];
  for (const part of text.split(/\s*[,;]\s*/)) {
    const [from, to] = part.split(/\s*[-–]\s*/).map((value) => Number.parseInt(value, 10));
    if (from === undefined || Number.isNaN(from)) continue;
    const last = to === undefined || Number.isNaN(to) ? from : Math.min(to, from + MAX_RANGE);
    for (let number = from; number <= last; number += 1) numbers.push(number);
  }
  return numbers;
}

/** Blanks out fenced and inline code (same length) so `array[1]` in code is not a citation. */
export function maskCode(text: string): string {
  if (!text.includes("`")) return text;
  return text.replace(/```[\s\S]*?(?:```|$)|`[^`\n]*`/g, (code) => " ".repeat(code.length));
}

/**
 * The one document a bracketed marker's text names, when it names one with a document extension
 * (`handbook.pdf, p. 4` → handbook.pdf, page 4): what a Markdown citation links the marker to.
 */
export function namedDocument(text: string): { filename: string; page: number | null } | null {
  if (text.includes(";")) return null;
  const named = parseNameMarker(text);
  return named && DOCUMENT_EXTENSIONS.has(named.filename.toLowerCase().split(".").pop() ?? "") ? named : null;
}
