import { readdir, readFile } from "node:fs/promises";
import { basename, join, relative } from "node:path";
import { readPdf } from "./read-pdf.js";
import { errorMessage } from "../util/error-message.js";

/** A passage of a document: one paragraph under its heading, on its page (PDFs). */
export interface Passage {
  filename: string;
  heading: string;
  text: string;
  /** The page it is on (1-based), for documents that have pages. */
  page: number | null;
  /** The document's title: its first heading, or a PDF's title. */
  title: string | null;
}

/** The documents the embedded workspace reads: Markdown, text and PDF. */
export const DOCUMENT_FILE = /\.(md|markdown|txt|pdf)$/i;

/** A passage and how well it matches a query. */
export interface Hit extends Passage {
  score: number;
}

const STOPWORDS = new Set(
  "a an and are as at be by can do does for from how i if in is it of on or should so that the this to what when where which who why will with you your me my we our us".split(
    " ",
  ),
);

/** Lower-cased word stems of a text, stop words removed (shared by indexing and querying). */
export function terms(text: string): string[] {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.filter((word) => !STOPWORDS.has(word)).map(stem);
}

function stem(word: string): string {
  if (word.length > 4 && word.endsWith("ies")) return `${word.slice(0, -3)}y`;
  if (word.length > 4 && word.endsWith("ing")) return word.slice(0, -3);
  if (word.length > 3 && word.endsWith("s") && !word.endsWith("ss")) return word.slice(0, -1);
  return word;
}

/** Splits Markdown or plain text into passages: prose paragraphs under their heading (Markdown's markup left out). */
export function splitPassages(
  filename: string,
  text: string,
  page: number | null = null,
  title: string | null = null,
): Passage[] {
  const passages: Passage[] = [];
  let heading = "";
  const documentTitle = title ?? /^#{1,6}\s+(.+)$/m.exec(text)?.[1]?.trim() ?? null;
  let paragraph: string[] = [];
  let inCode = false;
  // Markdown's images, layout HTML and link targets are markup; a text file's characters are all text.
  const markdown = /\.(md|markdown)$/i.test(filename);
  const flush = () => {
    const joined = paragraph.join("\n").trim();
    if (joined.length >= 20) passages.push({ filename, heading, text: joined, page, title: documentTitle });
    paragraph = [];
  };
  let inComment = false;
  // Code blocks, tables and HTML comments are left out: an extractive answer quotes prose.
  for (const rawLine of text.split(/\r?\n/)) {
    let line = rawLine;
    if (markdown && !inCode) {
      const outside = outsideComments(rawLine, inComment);
      const wasInComment = inComment;
      inComment = outside.open;
      // A line wholly inside comments is nothing, not a paragraph break (a blank line outside one is).
      if (outside.kept.trim() === "" && (wasInComment || rawLine.trim() !== "")) continue;
      line = outside.kept;
    }
    if (line.trimStart().startsWith("```")) {
      inCode = !inCode;
      flush();
      continue;
    }
    const headingMatch = inCode ? null : /^#{1,6}\s+(.*)$/.exec(line);
    if (headingMatch) {
      flush();
      heading = (headingMatch[1] ?? "").trim();
    } else if (inCode || line.trimStart().startsWith("|")) {
      // left out: code and table rows
    } else if (line.trim() === "") {
      flush();
    } else {
      const prose = markdown ? proseOf(line) : line;
      if (prose) paragraph.push(prose);
    }
  }
  flush();
  return passages;
}

/** The parts of a Markdown line outside HTML comments, given whether a comment is open at its start. */
function outsideComments(line: string, open: boolean): { kept: string; open: boolean } {
  let kept = "";
  let rest = line;
  for (;;) {
    if (open) {
      const end = rest.indexOf("-->");
      if (end < 0) return { kept, open: true };
      rest = rest.slice(end + 3);
      open = false;
    }
    const start = rest.indexOf("<!--");
    if (start < 0) return { kept: kept + rest, open: false };
    kept += rest.slice(0, start);
    rest = rest.slice(start + 4);
    open = true;
  }
}

/** HTML elements a Markdown document uses for layout; other `<words>` are prose (`<workspace>`). */
const HTML_TAG = /<\/?(?:a|b|br|details|div|em|hr|i|img|kbd|p|picture|source|span|strong|sub|summary|sup)\b[^>]*>/gi;

/**
 * A Markdown line (its comments already left out) as prose an answer may quote: images and layout
 * HTML (a README's screenshots, `<img>`, `<br>`) are left out, since a quoted image path means
 * nothing outside its document and a chat UI would show it broken; a link to another document keeps
 * its text and drops its target, which is relative to this document (web and mail links stay links).
 */
export function proseOf(line: string): string {
  const prose = line
    .replace(/!\[[^\]]*\]\([^)]*\)/g, "")
    .replace(HTML_TAG, "")
    .replace(/\[([^\]]+)\]\((?!https?:|mailto:)[^)\s]*\)/g, "$1")
    .trimEnd();
  return prose.trim() === "" ? "" : prose;
}

/** A BM25 full-text index over passages: the embedded workspace's search. */
export class DocumentIndex {
  private readonly entries: { passage: Passage; counts: Map<string, number>; length: number }[] = [];
  private readonly documentFrequency = new Map<string, number>();
  private averageLength = 0;

  constructor(passages: readonly Passage[]) {
    for (const passage of passages) {
      const counts = new Map<string, number>();
      const words = terms(`${passage.heading} ${passage.text}`);
      for (const word of words) counts.set(word, (counts.get(word) ?? 0) + 1);
      for (const word of counts.keys())
        this.documentFrequency.set(word, (this.documentFrequency.get(word) ?? 0) + 1);
      this.entries.push({ passage, counts, length: words.length });
    }
    this.averageLength =
      this.entries.reduce((sum, entry) => sum + entry.length, 0) / Math.max(1, this.entries.length);
  }

  /** Distinct document names, for steps that say where the workspace looked. */
  get filenames(): string[] {
    return [...new Set(this.entries.map((entry) => entry.passage.filename))];
  }

  /** The `limit` best passages for a query, best first; only passages that share a term. */
  search(query: string, limit: number): Hit[] {
    const queryTerms = [...new Set(terms(query))];
    const total = this.entries.length;
    const hits: Hit[] = [];
    for (const entry of this.entries) {
      let score = 0;
      for (const term of queryTerms) {
        const frequency = entry.counts.get(term);
        if (!frequency) continue;
        const documents = this.documentFrequency.get(term) ?? 0;
        const idf = Math.log(1 + (total - documents + 0.5) / (documents + 0.5));
        score +=
          (idf * frequency * 2.2) / (frequency + 1.2 * (0.25 + (0.75 * entry.length) / this.averageLength));
      }
      if (score > 0) hits.push({ ...entry.passage, score });
    }
    return hits.sort((a, b) => b.score - a.score).slice(0, limit);
  }
}

/** Told of a document that could not be read (it is skipped). */
export type UnreadableDocument = (file: string, reason: string) => void;

/**
 * Reads every document below the given paths (files or folders) into passages: Markdown and text
 * by paragraph under their headings, PDFs page by page. A document that cannot be read is
 * skipped and reported, never fatal.
 */
export async function loadPassages(
  paths: readonly string[],
  unreadable: UnreadableDocument = () => undefined,
): Promise<Passage[]> {
  const passages: Passage[] = [];
  for (const path of paths) {
    for (const file of await listDocuments(path)) {
      const name = relative(path, file) || basename(file);
      try {
        passages.push(...(await readPassages(file, name)));
      } catch (error) {
        unreadable(file, errorMessage(error));
      }
    }
  }
  return passages;
}

/** One document's passages. */
export async function readPassages(file: string, name: string): Promise<Passage[]> {
  if (/\.pdf$/i.test(file)) {
    const pdf = await readPdf(await readFile(file));
    return pdf.pages.flatMap((text, index) => splitPassages(name, paragraphsOf(text), index + 1, pdf.title ?? firstLine(text)));
  }
  return splitPassages(name, await readFile(file, "utf8"));
}

/** PDF text comes line by line: a line that ends a sentence ends a paragraph. */
function paragraphsOf(text: string): string {
  return text.replace(/([.!?:])\n(?=\S)/g, "$1\n\n");
}

function firstLine(text: string): string | null {
  return text.split("\n")[0]?.trim() || null;
}

/** Every document file below a path (a file or a folder), sorted. */
export async function listDocuments(path: string): Promise<string[]> {
  try {
    const entries = await readdir(path, { withFileTypes: true, recursive: true });
    return entries
      .filter((entry) => entry.isFile() && DOCUMENT_FILE.test(entry.name))
      .map((entry) => join(entry.parentPath, entry.name))
      .filter((file) => !file.includes("node_modules"))
      .sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOTDIR")
      return DOCUMENT_FILE.test(path) ? [path] : [];
    throw error;
  }
}
