import type { CompletionSource } from "../openai/chat-completion.js";

/** A source before citation analysis: what the upstream said about a document, without `cited`. */
export type SourceRecord = Omit<CompletionSource, "cited">;

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
