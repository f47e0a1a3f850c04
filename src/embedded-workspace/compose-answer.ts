import type { DocumentIndex, Hit } from "./document-index.js";

/** The interaction modes the embedded workspace answers in. */
export type EmbeddedMode = "ask" | "reason" | "build";

/** What one turn of a query will show: the steps, in order, then the final output. */
export interface AnswerScript {
  steps: ({ text: string } | { tool: string })[];
  output: string;
}

/** The question of this turn, and the previous turn's when the query continues a thread. */
export interface Question {
  prompt: string;
  mode: EmbeddedMode;
  previousPrompt?: string | undefined;
}

const PASSAGES: Record<EmbeddedMode, number> = { ask: 3, reason: 5, build: 4 };

/**
 * Writes an extractive answer from the index: the best sentences of the best passages, each
 * followed by a numbered citation marker, and a closing `Sources:` section. Modes differ the way a
 * user would notice: `ask` is short, `reason` breaks the question down and compares, `build` writes
 * a structured document.
 */
export function composeAnswer(question: Question, index: DocumentIndex): AnswerScript {
  const searchText = question.previousPrompt
    ? `${question.prompt} ${question.previousPrompt}`
    : question.prompt;
  const parts = question.mode === "reason" ? splitQuestion(question.prompt) : [question.prompt];
  const steps: AnswerScript["steps"] = [];
  const quoted = shorten(question.prompt, 80);
  if (question.mode === "ask")
    steps.push({ text: `Looking for “${quoted}” in ${index.filenames.length} documents.` });
  if (question.mode === "reason")
    steps.push({
      text: `Breaking the question into ${parts.length} part${parts.length === 1 ? "" : "s"}: ${parts.map((part) => `“${shorten(part, 40)}”`).join(", ")}.`,
    });
  if (question.mode === "build") steps.push({ text: `Planning a document on “${quoted}”.` });

  const hits = new Map<string, Hit>();
  for (const part of parts) {
    steps.push({ tool: "search_documents" });
    const extra = question.previousPrompt && part === question.prompt ? searchText : part;
    for (const hit of index.search(extra, PASSAGES[question.mode])) {
      const key = `${hit.filename}\u0000${hit.heading}\u0000${hit.text}`;
      if (!hits.has(key)) hits.set(key, hit);
    }
  }
  const best = [...hits.values()].sort((a, b) => b.score - a.score).slice(0, PASSAGES[question.mode]);
  if (best.length === 0) {
    steps.push({ text: "No passage matched." });
    return { steps, output: `I found nothing about “${quoted}” in this workspace's documents.` };
  }
  const documents = [...new Set(best.map((hit) => hit.filename))];
  steps.push({
    text: `Found ${best.length} relevant passage${best.length === 1 ? "" : "s"} in ${documents.join(", ")}.`,
  });
  if (question.mode === "reason") steps.push({ text: "Comparing what the passages say before answering." });
  if (question.mode === "build") {
    steps.push({ tool: "outline_document" });
    steps.push({ text: `Writing ${best.length} section${best.length === 1 ? "" : "s"}.` });
  }

  const sources = numberSources(best);
  const marker = (hit: Hit) => `[${sources.numberOf(hit)}]`;
  const lead = question.previousPrompt ? `Following up on “${shorten(question.previousPrompt, 60)}”: ` : "";
  let body: string;
  if (question.mode === "ask") {
    body = lead + best.map((hit) => `${bestSentences(hit.text, searchText, 1)} ${marker(hit)}`).join(" ");
  } else if (question.mode === "reason") {
    const paragraphs = best.map(
      (hit) =>
        `From ${hit.filename}${hit.heading ? ` (${hit.heading})` : ""}: ${bestSentences(hit.text, searchText, 2)} ${marker(hit)}`,
    );
    const first = best[0] as Hit;
    body = `${lead}${paragraphs.join("\n\n")}\n\nIn short: ${bestSentences(first.text, searchText, 1)} ${marker(first)}`;
  } else {
    const sections = best.map(
      (hit) => `## ${hit.heading || hit.filename}\n\n${shorten(clean(hit.text), 600)} ${marker(hit)}`,
    );
    body = `${lead}# ${shorten(question.prompt, 80)}\n\n${sections.join("\n\n")}`;
  }
  return { steps, output: `${body}\n\nSources:\n${sources.lines.join("\n")}` };
}

function numberSources(hits: readonly Hit[]): { numberOf(hit: Hit): number; lines: string[] } {
  const numbers = new Map<string, number>();
  const lines: string[] = [];
  const key = (hit: Hit) => `${hit.filename}\u0000${hit.heading}`;
  for (const hit of hits) {
    if (numbers.has(key(hit))) continue;
    numbers.set(key(hit), numbers.size + 1);
    lines.push(`[${numbers.size}] ${hit.filename}${hit.heading ? ` — ${clean(hit.heading)}` : ""}`);
  }
  return { numberOf: (hit) => numbers.get(key(hit)) ?? 1, lines };
}

/** The `count` sentences of a passage that share most terms with the question, in text order. */
function bestSentences(text: string, question: string, count: number): string {
  const wanted = new Set(question.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
  const sentences = clean(text)
    .split(/(?<=[.!?])\s+(?=[\p{Lu}“"(])/u)
    .filter((sentence) => sentence.length > 0)
    // A sentence cut inside inline code would leave a lone backtick that opens code to the end.
    .map((sentence) =>
      (sentence.match(/`/g)?.length ?? 0) % 2 === 1 ? sentence.replace(/`/g, "") : sentence,
    );
  const scored = sentences.map((sentence, position) => ({
    sentence,
    position,
    score: (sentence.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((word) => wanted.has(word)).length,
  }));
  const chosen = scored
    .sort((a, b) => b.score - a.score || a.position - b.position)
    .slice(0, count)
    .sort((a, b) => a.position - b.position);
  return shorten(chosen.map((entry) => entry.sentence).join(" "), 400);
}

/**
 * Passage text made safe to quote: one line, and no brackets, so that text about citation
 * markers (this project's own docs have plenty) is not read as a marker.
 */
function clean(text: string): string {
  return text
    .replace(/```[\s\S]*?```/g, " ")
    .replace(/[[\]【】]/g, (bracket) => (bracket === "[" || bracket === "【" ? "(" : ")"))
    .replace(/^\s*[-*|>]+\s*/gm, "")
    .replace(/\s+/g, " ")
    .trim();
}

function splitQuestion(prompt: string): string[] {
  const parts = prompt
    .split(/\s*(?:\?|;|\band\b|\bor\b|\bversus\b|\bvs\.?)\s*/i)
    .map((part) => part.trim())
    .filter((part) => part.split(/\s+/).length >= 2);
  return parts.length > 1 ? parts.slice(0, 3) : [prompt];
}

function shorten(text: string, max: number): string {
  const characters = [...text.replace(/\s+/g, " ").trim()];
  return characters.length <= max ? characters.join("") : `${characters.slice(0, max - 1).join("")}…`;
}
