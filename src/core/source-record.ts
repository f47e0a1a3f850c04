import { z } from "zod";

/** What is known of one source document (docs/architecture/upstream.md#the-chat-completion-resource). */
export const sourceRecordSchema = z.object({
  filename: z.string().nullable(),
  title: z.string().nullable(),
  page: z.int().nullable(),
  snippet: z.string().nullable(),
});
/** A source before citation analysis: what the upstream said about a document. */
export type SourceRecord = z.infer<typeof sourceRecordSchema>;

/** A source of an answer, with whether a marker in the answer points at it. */
export const citedSourceSchema = sourceRecordSchema.extend({ cited: z.boolean() });
/** A source of a finished answer. */
export type CitedSource = z.infer<typeof citedSourceSchema>;

/** Key of a document and page: mentions with the same key are merged unless their titles differ. */
export function sourceKey(source: SourceRecord): string {
  const name = (source.filename ?? source.title ?? "").trim().toLowerCase();
  return `${name}|${source.page ?? ""}`;
}

/** Fills the gaps of `base` with what `extra` knows; never overwrites a known value. */
export function mergeSource(base: SourceRecord, extra: SourceRecord): SourceRecord {
  return {
    filename: base.filename ?? extra.filename,
    title: base.title ?? extra.title,
    page: base.page ?? extra.page,
    snippet: base.snippet ?? extra.snippet,
  };
}

/** An empty record, for building one field at a time. */
export function emptySource(): SourceRecord {
  return { filename: null, title: null, page: null, snippet: null };
}

/** A page number from a number or a numeric string; anything else (ranges, roman numerals) is unknown. */
export function toPage(value: unknown): number | null {
  if (typeof value === "number" && Number.isInteger(value) && value >= 0) return value;
  if (typeof value === "string" && /^\s*\d{1,9}\s*$/.test(value)) return Number.parseInt(value, 10);
  return null;
}
