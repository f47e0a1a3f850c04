import type { CitedSource } from "../core/source-record.js";
import { parseReferences } from "./parse-references.js";

/** How citations reach the client: annotations only, or also a Markdown list for UIs that ignore them. */
export type CitationStyle = "annotations" | "markdown";

/**
 * The "Sources" list appended to the content with `CITATION_STYLE=markdown`, for chat UIs that
 * ignore annotations: one line per source (cited ones, or all when none is cited) with filename,
 * page and title. Empty when the output already closes with its own references section or there
 * are no sources. It follows the output, so annotation offsets into the output stay valid.
 */
export function sourcesFooter(output: string, sources: readonly CitedSource[], style: CitationStyle): string {
  if (style !== "markdown" || sources.length === 0 || parseReferences(output) !== null) return "";
  const cited = sources.filter((source) => source.cited);
  const listed = cited.length > 0 ? cited : sources;
  const lines = listed.map((source) => {
    const name = source.filename ?? source.title ?? "source";
    const page = source.page === null ? "" : `, p. ${source.page}`;
    const title = source.filename && source.title ? ` — ${source.title}` : "";
    return `- ${name}${page}${title}`;
  });
  return `\n\n**Sources**\n${lines.join("\n")}`;
}
