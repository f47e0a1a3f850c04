import type { DocumentIndex, Hit } from "./document-index.js";

/** The interaction modes the embedded workspace answers in. */
export type EmbeddedMode = "ask" | "reason" | "build";

/** A structured source of an answer, as the query object carries it. */
export interface ScriptSource {
  filename: string;
  title: string | null;
  page: number | null;
  snippet: string;
}

/** What one turn of a query will show: the steps, in order, the final output, and its sources. */
export interface AnswerScript {
  steps: ({ text: string } | { tool: string })[];
  output: string;
  /** Structured sources, on the query object (`reason` and `build`); none when the output lists its own. */
  sources: ScriptSource[];
}

/** The question of this turn, and the previous turn's when the query continues a thread. */
export interface Question {
  prompt: string;
  mode: EmbeddedMode;
  previousPrompt?: string | undefined;
}

const PASSAGES: Record<EmbeddedMode, number> = { ask: 3, reason: 5, build: 4 };
/** Longest sentence quoted: longer ones are passed over rather than cut. */
const MAX_SENTENCE = 400;

/**
 * Writes an extractive answer from the index: whole sentences of the best passages, each followed
 * by a citation marker, in valid Markdown whatever the passages contain (nothing is cut inside a
 * code span, link or emphasis; brackets that are not links are escaped, so nothing in a document
 * reads as a citation). The modes differ the way a user would notice, and between them show every
 * citation form the adapter reads: `ask` is short, with numbered markers and a closing `Sources:`
 * list; `reason` breaks the question down and compares, citing by name and page
 * (`[handbook.pdf, p. 4]`) with structured sources on the query and a `[1, 2]` summary; `build`
 * writes a document with footnote markers (`[^1]`) into its structured sources.
 */
export function composeAnswer(question: Question, index: DocumentIndex): AnswerScript {
  const searchText = question.previousPrompt ? `${question.prompt} ${question.previousPrompt}` : question.prompt;
  const parts = question.mode === "reason" ? splitQuestion(question.prompt) : [question.prompt];
  const steps: AnswerScript["steps"] = [];
  const quoted = shorten(question.prompt, 80);
  if (question.mode === "ask") steps.push({ text: `Looking for “${quoted}” in ${index.filenames.length} documents.` });
  if (question.mode === "reason") {
    steps.push({ text: `Breaking the question into ${parts.length} part${parts.length === 1 ? "" : "s"}: ${parts.map((part) => `“${shorten(part, 40)}”`).join(", ")}.` });
  }
  if (question.mode === "build") steps.push({ text: `Planning a document on “${quoted}”.` });

  const hits = new Map<string, Hit>();
  for (const part of parts) {
    steps.push({ tool: "search_documents" });
    const extra = question.previousPrompt && part === question.prompt ? searchText : part;
    for (const hit of index.search(extra, PASSAGES[question.mode])) {
      const key = `${hit.filename}\u0000${hit.page ?? ""}\u0000${hit.heading}\u0000${hit.text}`;
      if (!hits.has(key)) hits.set(key, hit);
    }
  }
  const best = [...hits.values()].filter(quotable).sort((a, b) => b.score - a.score).slice(0, PASSAGES[question.mode]);
  if (best.length === 0) {
    steps.push({ text: "No passage matched." });
    return { steps, output: `I found nothing about “${markdownSafe(quoted)}” in this workspace's documents.`, sources: [] };
  }
  const documents = [...new Set(best.map((hit) => hit.filename))];
  steps.push({ text: `Found ${best.length} relevant passage${best.length === 1 ? "" : "s"} in ${documents.join(", ")}.` });
  if (question.mode === "reason") steps.push({ text: "Comparing what the passages say before answering." });
  if (question.mode === "build") {
    steps.push({ tool: "outline_document" });
    steps.push({ text: `Writing ${best.length} section${best.length === 1 ? "" : "s"}.` });
  }

  const lead = question.previousPrompt ? `Following up on “${markdownSafe(shorten(question.previousPrompt, 60))}”: ` : "";
  const sources = new SourceNumbers();
  if (question.mode === "ask") {
    const sentences = best.map((hit) => cite(bestSentences(hit.text, searchText, 1), `[${sources.numberOf(hit, "")}]`));
    const list = sources.entries.map((entry, number) => `[${number + 1}] ${referenceOf(entry.hit)}`);
    return { steps, output: `${lead}${sentences.join(" ")}\n\nSources:\n${list.join("\n")}`, sources: [] };
  }
  if (question.mode === "reason") {
    const paragraphs = best.map((hit) => {
      const chosen = bestSentences(hit.text, searchText, 2);
      sources.numberOf(hit, chosen.join(" "));
      return `From ${markdownSafe(hit.filename)}${hit.heading ? ` (${markdownSafe(hit.heading)})` : ""}: ${cite(chosen, nameMarker(hit))}`;
    });
    const first = best[0] as Hit;
    const summary = bestSentences(first.text, searchText, 1);
    const numbers = [...new Set(best.slice(0, 2).map((hit) => sources.numberOf(hit, "")))];
    return { steps, output: `${lead}${paragraphs.join("\n\n")}\n\nIn short: ${cite(summary, `[${numbers.join(", ")}]`)}`, sources: sources.structured() };
  }
  const sections = best.map((hit) => {
    const chosen = bestSentences(hit.text, searchText, 4, 600);
    const number = sources.numberOf(hit, chosen.join(" "));
    return `## ${markdownSafe(hit.heading || hit.title || hit.filename)}\n\n${cite(chosen, `[^${number}]`)}`;
  });
  return { steps, output: `${lead}# ${markdownSafe(shorten(question.prompt, 80))}\n\n${sections.join("\n\n")}`, sources: sources.structured() };
}

/** A passage with something to quote: not only a sentence that introduces what follows it (`…as follows:`). */
function quotable(hit: Hit): boolean {
  return splitSentences(oneLine(hit.text)).some((sentence) => !sentence.endsWith(":"));
}

/** Each sentence followed by the marker: a citation after every cited sentence. */
function cite(sentences: readonly string[], marker: string): string {
  return sentences.map((sentence) => `${sentence} ${marker}`).join(" ");
}

/** `[handbook.pdf, p. 4]`, or `[handbook.md]` for a document without pages. */
function nameMarker(hit: Hit): string {
  return `[${hit.filename}${hit.page === null ? "" : `, p. ${hit.page}`}]`;
}

/** A references entry: `handbook.pdf, p. 4 — Leave policy` (also the JSON mode's Sources list). */
export function referenceOf(hit: Hit): string {
  const page = hit.page === null ? "" : `, p. ${hit.page}`;
  const heading = hit.heading || hit.title;
  return `${hit.filename}${page}${heading ? ` — ${markdownSafe(heading)}` : ""}`;
}

/** The sources of one answer, numbered in first-cited order (one per document section and page). */
class SourceNumbers {
  readonly entries: { hit: Hit; snippet: string }[] = [];
  private readonly numbers = new Map<string, number>();

  numberOf(hit: Hit, snippet: string): number {
    const key = `${hit.filename}\u0000${hit.page ?? ""}\u0000${hit.heading}`;
    const known = this.numbers.get(key);
    if (known !== undefined) {
      const entry = this.entries[known - 1];
      if (entry && !entry.snippet && snippet) entry.snippet = snippet;
      return known;
    }
    this.entries.push({ hit, snippet });
    this.numbers.set(key, this.entries.length);
    return this.entries.length;
  }

  /** The structured sources the query object carries: filename, title, page, and the passage quoted. */
  structured(): ScriptSource[] {
    return this.entries.map(({ hit, snippet }) => ({
      filename: hit.filename,
      title: hit.heading || hit.title || null,
      page: hit.page,
      snippet: plainText(snippet || hit.text).slice(0, 300),
    }));
  }
}

/**
 * The `count` sentences of a passage that share most terms with the question, in text order:
 * whole sentences (never longer than `MAX_SENTENCE`, and together within `budget` characters when
 * possible), each made Markdown-safe on its own.
 */
export function bestSentences(text: string, question: string, count: number, budget = 400): string[] {
  const wanted = new Set(question.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
  const all = splitSentences(oneLine(text)).map(markdownSafe);
  // A sentence that ends in a colon introduces what follows it (a list, a block), which is not quoted.
  const fitting = all.filter((sentence) => sentence.length <= MAX_SENTENCE && !sentence.endsWith(":"));
  const candidates = fitting.length > 0 ? fitting : all.slice(0, 1);
  const scored = candidates.map((sentence, position) => ({
    sentence,
    position,
    score: (sentence.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((word) => wanted.has(word)).length,
  }));
  const chosen: typeof scored = [];
  let length = 0;
  for (const entry of scored.sort((a, b) => b.score - a.score || a.position - b.position)) {
    if (chosen.length >= count) break;
    if (chosen.length > 0 && length + entry.sentence.length > budget) continue;
    chosen.push(entry);
    length += entry.sentence.length;
  }
  return chosen.sort((a, b) => a.position - b.position).map((entry) => entry.sentence);
}

/** A passage as one line: list bullets, quote and table marks at line starts dropped, white space collapsed. */
function oneLine(text: string): string {
  return text
    .replace(/^\s*(?:[-*+]\s+|\d{1,9}[.)]\s+|>\s*|\|\s*)/gm, "")
    .replace(/\s+/g, " ")
    .trim();
}

/**
 * Whole sentences: a sentence ends at `.`, `!` or `?` followed by white space and a capital,
 * quote or bracket — but never inside a code span or a link's text or address.
 */
export function splitSentences(text: string): string[] {
  const sentences: string[] = [];
  let start = 0;
  let index = 0;
  while (index < text.length) {
    const char = text[index] as string;
    if (char === "`") {
      const close = text.indexOf("`", index + 1);
      index = close < 0 ? index + 1 : close + 1;
      continue;
    }
    if (char === "[") {
      const link = /^\[[^[\]\n]*\]\([^()\s]*\)/.exec(text.slice(index));
      if (link) {
        index += link[0].length;
        continue;
      }
    }
    if ((char === "." || char === "!" || char === "?") && /^\s+[\p{Lu}“"([]/u.test(text.slice(index + 1, index + 3))) {
      sentences.push(text.slice(start, index + 1).trim());
      start = index + 1;
    }
    index += 1;
  }
  const rest = text.slice(start).trim();
  if (rest) sentences.push(rest);
  return sentences.filter(Boolean);
}

/**
 * Text that is valid Markdown on its own, whatever it contains: an odd backtick or `**`/`*`
 * count (a code span or emphasis cut by the sentence split) loses those marks, and brackets that
 * are not a link's are escaped, so that a document's `[1]` or `[notes.md]` never reads as a
 * citation of the answer.
 */
export function markdownSafe(text: string): string {
  let safe = text;
  if ((safe.match(/`/g)?.length ?? 0) % 2 === 1) safe = safe.replace(/`/g, "");
  const outsideCode = (transform: (part: string) => string) =>
    safe
      .split(/(`[^`]*`)/)
      .map((part, index) => (index % 2 === 1 ? part : transform(part)))
      .join("");
  const prose = () => safe.replace(/`[^`]*`/g, "");
  if ((prose().match(/\*\*/g)?.length ?? 0) % 2 === 1) safe = outsideCode((part) => part.replace(/\*\*/g, ""));
  if ((prose().match(/\*/g)?.length ?? 0) % 2 === 1) safe = outsideCode((part) => part.replace(/\*/g, ""));
  // Links stay links; every other bracket (and 【】, another citation form) is escaped.
  const escapeBrackets = (piece: string) =>
    piece.replace(/\\?([[\]【】])/g, (_, bracket: string) => `\\${bracket === "【" ? "[" : bracket === "】" ? "]" : bracket}`);
  return outsideCode((part) =>
    part
      .split(/(\[[^[\]\n]*\]\([^()\s]*\))/)
      .map((piece, index) => (index % 2 === 1 ? piece : escapeBrackets(piece)))
      .join(""),
  );
}

/** A passage as a snippet: plain text, no Markdown marks. */
function plainText(text: string): string {
  return oneLine(text)
    .replace(/\[([^[\]]*)\]\([^()\s]*\)/g, "$1")
    .replace(/[`*_\\]/g, "")
    .trim();
}

function splitQuestion(prompt: string): string[] {
  const parts = prompt
    .split(/\s*(?:\?|;|\band\b|\bor\b|\bversus\b|\bvs\.?)\s*/i)
    .map((part) => part.trim())
    .filter((part) => part.split(/\s+/).length >= 2);
  return parts.length > 1 ? parts.slice(0, 3) : [prompt];
}

/** At most `max` characters, cut at a word boundary (for steps, and the prompt quoted back). */
function shorten(text: string, max: number): string {
  const characters = [...text.replace(/\s+/g, " ").trim()];
  if (characters.length <= max) return characters.join("");
  const cut = characters.slice(0, max - 1).join("");
  const space = cut.lastIndexOf(" ");
  return `${space > max / 2 ? cut.slice(0, space) : cut}…`;
}
