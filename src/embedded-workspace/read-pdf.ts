import { extractText, getDocumentProxy, getMeta } from "unpdf";

/** A PDF's text, page by page, and its title when its metadata has one. */
export interface PdfText {
  pages: string[];
  title: string | null;
}

/**
 * Reads a PDF's text with unpdf (Mozilla's PDF.js in a build for servers: pure JavaScript, no
 * native code, nothing fetched at run time). Throws when the file is not a readable PDF.
 */
export async function readPdf(bytes: Uint8Array): Promise<PdfText> {
  const pdf = await getDocumentProxy(new Uint8Array(bytes));
  try {
    const { text } = await extractText(pdf, { mergePages: false });
    const meta = await getMeta(pdf).catch(() => null);
    const title = (meta?.info as { Title?: unknown } | undefined)?.Title;
    return { pages: text, title: typeof title === "string" && title.trim() ? title.trim() : null };
  } finally {
    await pdf.destroy();
  }
}
