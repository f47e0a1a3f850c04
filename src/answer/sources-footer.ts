import type { CitedSource } from "../core/source-record.js";
import { parseReferences } from "./parse-references.js";
import { markdownUrl, type SourceLinker } from "./source-links.js";

/** How citations reach the client: annotations only, or also Markdown in the content for UIs that ignore them. */
export type CitationStyle = "annotations" | "markdown";

/**
 * The "Sources" list appended to the content in the Markdown citation style, for chat UIs that
 * ignore annotations: one line per source (the cited ones, or all when none is cited) with
 * filename, page and title, each a link when the source has one a browser can open. Without
 * links, it is left out when the output closes with its own references section (which says the
 * same); with links, it is added anyway, since those are what the reader can click. It follows the
 * output, so citation offsets into the output stay valid.
 */
export function sourcesFooter(
  output: string,
  sources: readonly CitedSource[],
  style: CitationStyle,
  linker?: SourceLinker,
): string {
  if (style !== "markdown" || sources.length === 0) return "";
  const cited = sources.filter((source) => source.cited);
  const listed = cited.length > 0 ? cited : sources;
  const links = listed.map((source) => (linker ? linker(source) : null));
  const anyLink = links.some((link) => link?.clickable);
  if (!anyLink && parseReferences(output) !== null) return "";
  const lines = listed.map((source, index) => {
    const name = source.filename ?? source.title ?? "source";
    const page = source.page === null ? "" : `, p. ${source.page}`;
    const title = source.filename && source.title ? ` — ${source.title}` : "";
    const link = links[index];
    return link?.clickable ? `- [${escapeLinkText(`${name}${page}${title}`)}](${markdownUrl(link.url)})` : `- ${name}${page}${title}`;
  });
  return `\n\n**Sources**\n${lines.join("\n")}`;
}

/** Link text with its brackets escaped, so a title cannot end the link early. */
function escapeLinkText(text: string): string {
  return text.replace(/[[\]\\]/g, "\\$&");
}
