import type { SourceRecord } from "../core/source-record.js";

/** A source's link: a URL a browser can open, or an identifier that only names the document. */
export interface SourceLink {
  url: string;
  clickable: boolean;
}

/** What signs a document page link: its `sig` for a workspace and a file (`auth/document-links.ts`). */
export interface DocumentLinkSigning {
  sign(workspace: string, filename: string): string;
}

/** How a deployment links to its sources (docs/architecture/dialects.md#source-links). */
export interface SourceLinkSettings {
  /** `SOURCE_URL_TEMPLATE`: `{workspace}`, `{filename}`, `{page}`, `{title}` are replaced, URL-encoded. */
  template: string | undefined;
  /** The adapter's own document page (`/documents/...`), when it serves one (the embedded workspace). */
  documentPage: (() => string) | undefined;
  /** Signs the document page's links, where the page asks for a key (listed keys; docs/trying-it.md#the-embedded-workspace). */
  documentLinks?: DocumentLinkSigning | undefined;
}

/** The links of one request's sources, bound to its workspace. */
export type SourceLinker = (source: SourceRecord) => SourceLink;

const PLACEHOLDER = /\{(workspace|filename|page|title)\}/g;

/**
 * Links a request's sources: through the deployment's template when it has one; else to the
 * adapter's document page (the cited passage highlighted, signed where the page asks for a key)
 * when it serves documents; else a `urn:workspace-document:` identifier, which names the document
 * without pretending to be a page.
 */
export function sourceLinker(settings: SourceLinkSettings, workspace: string): SourceLinker {
  return (source) => {
    const name = source.filename ?? source.title ?? "source";
    if (settings.template) {
      const values = { workspace, filename: name, page: source.page === null ? "" : String(source.page), title: source.title ?? "" };
      const url = settings.template.replace(PLACEHOLDER, (_, key: keyof typeof values) => encodeURIComponent(values[key]));
      return { url, clickable: /^https?:\/\//i.test(url) };
    }
    if (settings.documentPage) {
      const query = new URLSearchParams();
      if (source.page !== null) query.set("page", String(source.page));
      if (source.snippet) query.set("quote", source.snippet.slice(0, 300));
      if (settings.documentLinks) query.set("sig", settings.documentLinks.sign(workspace, name));
      const path = name.split("/").map(encodeURIComponent).join("/");
      const search = query.size > 0 ? `?${query}` : "";
      const fragment = source.snippet ? "#cited" : "";
      return { url: `${settings.documentPage()}/documents/${encodeURIComponent(workspace)}/${path}${search}${fragment}`, clickable: true };
    }
    const page = source.page === null ? "" : `#page=${source.page}`;
    return { url: `urn:workspace-document:${encodeURIComponent(workspace)}:${encodeURIComponent(name)}${page}`, clickable: false };
  };
}

/** A URL as a Markdown link target: parentheses and white space escaped, so the link cannot end early. */
export function markdownUrl(url: string): string {
  return url.replace(/[()\s<>]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`);
}
