import { z } from "zod";
import type { SourceRecord } from "../../core/source-record.js";

/** What a `search` result's id carries: the workspace it came from and what is known of the source. */
export interface SourceReference extends SourceRecord {
  workspace: string;
}

const PREFIX = "wsrc_";
/** Longest snippet an id carries (a longer one is cut, marked with `…`), so ids stay short enough to copy. */
export const MAX_ID_SNIPPET = 1000;

const encodedSchema = z.tuple([
  z.string().min(1),
  z.string().nullable(),
  z.string().nullable(),
  z.int().min(0).nullable(),
  z.string().nullable(),
]);

/**
 * The id of a `search` result (docs/architecture/mcp.md#mcp-tools): the source itself, encoded
 * (base64url of a small JSON array), so `fetch` needs nothing stored and any replica answers it.
 * It holds only what the answer already showed the caller (workspace, file, title, page, snippet),
 * never a credential; `fetch` still asks for the caller's credential and workspace.
 */
export function sourceId(source: SourceReference): string {
  const snippet = source.snippet && source.snippet.length > MAX_ID_SNIPPET ? `${source.snippet.slice(0, MAX_ID_SNIPPET - 1)}…` : source.snippet;
  const encoded: z.input<typeof encodedSchema> = [source.workspace, source.filename, source.title, source.page, snippet];
  return PREFIX + Buffer.from(JSON.stringify(encoded), "utf8").toString("base64url");
}

/** The source an id names, or null when the string is not an id that `search` made. */
export function readSourceId(id: string): SourceReference | null {
  if (!id.startsWith(PREFIX) || !/^[A-Za-z0-9_-]+$/.test(id.slice(PREFIX.length))) return null;
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(id.slice(PREFIX.length), "base64url").toString("utf8"));
  } catch {
    return null;
  }
  const parsed = encodedSchema.safeParse(decoded);
  if (!parsed.success) return null;
  const [workspace, filename, title, page, snippet] = parsed.data;
  return { workspace, filename, title, page, snippet };
}
