import { createHash } from "node:crypto";
import type { DocumentReader } from "../../core/document-reader.js";
import type { Authenticator } from "../../auth/authenticate.js";
import type { DocumentLinkSigner } from "../../auth/document-links.js";
import { AuthenticationError, NotFoundError } from "../../errors/adapter-error.js";
import { endWithText } from "../error-response.js";
import { errorResponse } from "../openapi.js";
import { type PathParams, type Route, type RouteCall, route } from "../route-table.js";

const STYLE = `body{font:16px/1.6 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b;background:#fff}
header{border-bottom:1px solid #ccc;margin-bottom:1rem}h1{font-size:1.3rem;margin:.2rem 0}p.meta{color:#555;margin:.2rem 0 .8rem}
pre{white-space:pre-wrap;word-wrap:break-word;font:15px/1.6 ui-monospace,monospace}mark{background:#ffe58a;color:#000;padding:0 .1em}
@media (prefers-color-scheme:dark){body{background:#111;color:#eee}p.meta{color:#bbb}mark{background:#8a6d00;color:#fff}}`;
/** A strict policy: no script at all, no requests, the one inline style by its hash. */
const POLICY = [
  "default-src 'none'",
  `style-src 'sha256-${createHash("sha256").update(STYLE).digest("base64")}'`,
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** Text as HTML: every character that means something in HTML escaped (documents are untrusted). */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/**
 * Where a quoted passage is in a text, matching its words across any white space (a snippet is
 * usually one line of a wrapped paragraph): [start, end) in the text, or null.
 */
export function findPassage(text: string, quote: string): [number, number] | null {
  const words = quote.replace(/…$/, "").trim().split(/\s+/).filter(Boolean).slice(0, 60);
  if (words.length === 0) return null;
  const pattern = new RegExp(words.map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("\\s+"));
  const match = pattern.exec(text);
  return match ? [match.index, match.index + match[0].length] : null;
}

/** Who may open a document where client keys are listed: a link's signature, or a listed key. */
export interface DocumentAccess {
  links: Pick<DocumentLinkSigner, "verify">;
  authenticate: Authenticator;
}

/**
 * The document page the embedded workspace's citations link to (docs/architecture.md#source-links):
 * the document's text, escaped, with the cited passage (`quote`) highlighted and scrolled to, and
 * the cited page named. With no keys listed (`npm start`: any key works), no credential is asked:
 * the link is opened by a browser from a chat UI. Where client keys are listed (`access`), a
 * browser sends none either: the answer's link carries its signature (`sig`), and an API client
 * may send a listed key instead; anything else is a 401 (docs/trying-it.md#the-embedded-workspace).
 */
export function documentRoutes(read: DocumentReader, access?: DocumentAccess): Route[] {
  async function page({ request, response, params, query }: RouteCall<PathParams<"/documents/{workspace}/{path+}">>): Promise<void> {
    // `{path+}`: the rest of the path, the document's folders included.
    const { workspace, path: filename } = params;
    if (access && !access.links.verify(workspace, filename, query.sig)) {
      // No signature that opens this document: a listed key then (a 401 without one, a 403 for an admin's).
      if (query.sig !== undefined && request.headers.authorization === undefined) {
        throw new AuthenticationError("This document link's signature is not valid here (links last as long as the adapter process that wrote them); send a listed key");
      }
      access.authenticate(request);
    }
    const document = await read(filename);
    if (!document) throw new NotFoundError(`No document '${filename}' in workspace '${workspace}'`);
    const quote = typeof query.quote === "string" ? query.quote : "";
    const pageNumber = typeof query.page === "string" && /^\d{1,6}$/.test(query.page) ? Number(query.page) : null;
    // A cited page of a paged document is shown alone; otherwise the whole text.
    const pageText = pageNumber !== null ? document.pages?.[pageNumber - 1] : undefined;
    const text = pageText ?? document.text;
    const found = quote ? findPassage(text, quote) : null;
    const body = found
      ? `${escapeHtml(text.slice(0, found[0]))}<mark id="cited">${escapeHtml(text.slice(found[0], found[1]))}</mark>${escapeHtml(text.slice(found[1]))}`
      : escapeHtml(text);
    const pages = document.pages ? ` of ${document.pages.length}` : "";
    const meta = [`workspace ${escapeHtml(workspace)}`, pageNumber !== null ? `page ${pageNumber}${pages}` : "", found ? '<a href="#cited">the cited passage</a> is highlighted' : ""]
      .filter(Boolean)
      .join(" · ");
    response.setHeader("content-security-policy", POLICY);
    response.setHeader("referrer-policy", "no-referrer");
    response.setHeader("content-type", "text/html; charset=utf-8");
    endWithText(
      response,
      "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">" +
        `<title>${escapeHtml(document.filename)}</title><style>${STYLE}</style></head><body><header><h1>${escapeHtml(document.filename)}</h1>` +
        `<p class="meta">${meta}</p></header><main><pre>${body}</pre></main></body></html>`,
    );
  }
  return [
    route("GET", "/documents/{workspace}/{path+}", page, {
      summary: "A document of the embedded workspace, with a cited passage highlighted (`quote`) and its page named (`page`)",
      parameters: [
        { name: "workspace", in: "path", required: true, schema: { type: "string" } },
        { name: "path", in: "path", required: true, schema: { type: "string" } },
        { name: "quote", in: "query", schema: { type: "string" } },
        { name: "page", in: "query", schema: { type: "integer" } },
        { name: "sig", in: "query", schema: { type: "string" }, description: "The link's signature, where client keys are listed (or send a listed key)" },
      ],
      responses: {
        "200": { description: "An HTML page" },
        "401": errorResponse("Client keys are listed, and neither the link's signature nor a listed key came"),
        "404": errorResponse("No such document"),
      },
    }),
  ];
}
