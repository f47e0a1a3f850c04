import type { Citation } from "../../answer/answer-events.js";
import { type DocumentLinkSigning, type SourceLinker, sourceLinker } from "../../answer/source-links.js";
import type { CitedSource } from "../../core/source-record.js";
import { type CitationFormat, FORMER_CITATIONS } from "./response-meta.js";
import type { ResponseAnnotation, ResponseFileCitation } from "./response-object.js";
import { fileIdOf } from "./response-state.js";

/** Writes an answer's citations as the annotations of its `output_text`. */
export type Annotate = (citations: readonly Citation[], sources: readonly CitedSource[]) => ResponseAnnotation[];

/**
 * The annotations of a response's citations in its format (docs/citations.md#the-responses-api):
 * `url_citation` with the source's link and title, spanning the marker; `file_citation` with a
 * stable file id and the marker's start as `index`; or none. Made from the response's echo alone,
 * so that every replica writes them the same, but for the signature a document page link carries
 * where that page asks for a key (`signing`: the process's own, docs/trying-it.md#the-embedded-workspace).
 */
export function annotatorOf(citations: CitationFormat = FORMER_CITATIONS, signing?: DocumentLinkSigning): Annotate {
  if (citations.format === "none") return () => [];
  if (citations.format === "file_citation") {
    return (cited, sources) => {
      // Several markers cite one source: its file id (a hash) is made once per answer.
      const fileIds = new Map<string, string>();
      return cited.map((citation) => fileCitationOf(citation, sources[citation.source], fileIds));
    };
  }
  const { template, documentPage, workspace } = citations.links;
  const page = documentPage === null ? undefined : () => documentPage;
  const settings = { template: template ?? undefined, documentPage: page, documentLinks: signing };
  const links: SourceLinker = sourceLinker(settings, workspace);
  return (cited, sources) =>
    cited.map((citation) => {
      const source = sources[citation.source];
      const url = links(source ?? { filename: citation.filename, title: null, page: null, snippet: null }).url;
      return { type: "url_citation", url, title: source?.title ?? citation.filename, start_index: citation.start, end_index: citation.end };
    });
}

function fileCitationOf(citation: Citation, source: CitedSource | undefined, fileIds: Map<string, string>): ResponseFileCitation {
  const annotation: ResponseFileCitation = {
    type: "file_citation",
    file_id: fileIdOf(citation.filename, source, fileIds),
    filename: citation.filename,
    index: citation.start,
  };
  if (source?.title) annotation.title = source.title;
  if (source?.page !== null && source?.page !== undefined) annotation.page = source.page;
  if (source?.snippet) annotation.snippet = source.snippet;
  return annotation;
}
