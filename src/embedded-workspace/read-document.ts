import { readFile, stat } from "node:fs/promises";
import { basename, relative, resolve, sep } from "node:path";
import type { DocumentReader } from "../core/document-reader.js";
import { listDocuments } from "./document-index.js";
import { readPdf } from "./read-pdf.js";


/**
 * The embedded workspace's documents by the names its answers cite them with (relative to the
 * folder they were found in, or a file's own name). Only files the index would read are served:
 * a name that leaves its folder (`../`), or names anything else, is not found.
 */
export function documentReader(roots: readonly string[]): DocumentReader {
  return async (filename) => {
    for (const root of roots) {
      const folder = resolve(root);
      const isFolder = await stat(folder).then((info) => info.isDirectory(), () => false);
      const candidate = isFolder ? resolve(folder, filename) : folder;
      if (isFolder ? !candidate.startsWith(folder + sep) : basename(folder) !== filename) continue;
      const listed = await listDocuments(folder).catch(() => [] as string[]);
      if (!listed.map((file) => resolve(file)).includes(candidate)) continue;
      const name = isFolder ? relative(folder, candidate).split(sep).join("/") : basename(candidate);
      if (/\.pdf$/i.test(candidate)) {
        const pdf = await readFile(candidate).then(readPdf).catch(() => null);
        if (pdf) return { filename: name, text: pdf.pages.join("\n\n"), pages: pdf.pages };
        continue;
      }
      const text = await readFile(candidate, "utf8").catch(() => null);
      if (text !== null) return { filename: name, text };
    }
    return null;
  };
}

