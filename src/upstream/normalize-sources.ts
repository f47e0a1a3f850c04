import { emptySource, type SourceRecord, toPage } from "../core/source-record.js";

// docs/upstream-assumptions.md#sources-and-citations: structured `sources` arrays may come from the query object, a list
// item, a tool step or a realtime publication, with field names we can only guess. These aliases
// are the common ones (OpenAI file search, LlamaIndex, LangChain document metadata, Vectara).
const FILENAME_KEYS = [
  "filename",
  "file_name",
  "fileName",
  "file",
  "document_name",
  "source",
  "path",
  "name",
];
const TITLE_KEYS = ["title", "document_title", "documentTitle", "heading", "name"];
const PAGE_KEYS = ["page", "page_number", "pageNumber", "page_label", "pageLabel"];
const SNIPPET_KEYS = ["snippet", "excerpt", "quote", "text", "content", "chunk", "passage"];
const NESTED_KEYS = ["metadata", "document", "file", "file_citation"];

/**
 * Turns whatever the upstream calls a source into `SourceRecord`s, skipping what it cannot read;
 * appended to `records` when given (one array for a query and all its steps).
 */
export function normalizeSources(raw: unknown, records: SourceRecord[] = []): SourceRecord[] {
  if (!Array.isArray(raw)) return records;
  for (const item of raw) {
    const record = typeof item === "string" ? fromString(item) : fromObject(item, 0);
    if (record && (record.filename || record.title)) records.push(record);
  }
  return records;
}

/**
 * Structured sources wherever a query, list item or step carries them (`sources`, `citations`,
 * `documents`, `references`), appended to `records` when given.
 */
export function sourcesIn(value: unknown, records: SourceRecord[] = []): SourceRecord[] {
  if (!isObject(value)) return records;
  normalizeSources(value.sources, records);
  normalizeSources(value.citations, records);
  normalizeSources(value.documents, records);
  return normalizeSources(value.references, records);
}

function fromString(text: string): SourceRecord | null {
  const trimmed = text.trim();
  return trimmed ? { ...emptySource(), filename: trimmed } : null;
}

function fromObject(value: unknown, depth: number): SourceRecord | null {
  if (!isObject(value) || depth > 2) return null;
  const record = emptySource();
  record.filename = firstString(
    value,
    FILENAME_KEYS.filter((key) => key !== "name" || looksLikeFile(value.name)),
  );
  record.title = firstString(
    value,
    TITLE_KEYS.filter((key) => key !== "name" || record.filename !== value.name),
  );
  record.page = firstPage(value);
  record.snippet = firstString(value, SNIPPET_KEYS);
  if (typeof value.url === "string" && !record.filename) record.filename = lastPathSegment(value.url);
  for (const key of NESTED_KEYS) {
    const nested = fromObject(value[key], depth + 1);
    if (nested) {
      record.filename ??= nested.filename;
      record.title ??= nested.title;
      record.page ??= nested.page;
      record.snippet ??= nested.snippet;
    }
  }
  return record;
}

function firstString(value: Record<string, unknown>, keys: string[]): string | null {
  for (const key of keys) {
    const candidate = value[key];
    if (typeof candidate === "string" && candidate.trim()) return candidate.trim();
  }
  return null;
}

function firstPage(value: Record<string, unknown>): number | null {
  for (const key of PAGE_KEYS) {
    const page = toPage(value[key]);
    if (page !== null) return page;
  }
  return null;
}

function looksLikeFile(value: unknown): boolean {
  return typeof value === "string" && /\.[A-Za-z][A-Za-z0-9]{0,7}$/.test(value.trim());
}

function lastPathSegment(url: string): string | null {
  const segment = url.split(/[?#]/)[0]?.split("/").filter(Boolean).pop();
  if (!segment) return null;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
