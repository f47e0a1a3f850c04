import { isObject } from "./host-bridge.js";

/** A source as the card shows it (the answer tools' `structuredContent.sources[]`, docs/mcp.md#tools). */
export interface CardSource {
  n: number;
  filename: string | null;
  title: string | null;
  page: number | null;
  snippet: string | null;
  url: string;
  cited: boolean;
  /** The id `fetch` takes, when the result carries it (the card's hosts get it). */
  id: string | null;
}

/** What a tool result shows. Results come from the host and are read defensively: a field of another type is left out. */
export type CardResult =
  | { kind: "answer"; answer: string; queryId: string | null; mode: string | null; sources: CardSource[]; steps: string[] }
  /** A result without `structuredContent` (some hosts pass only `content`): its Markdown as it is. */
  | { kind: "text"; text: string }
  | { kind: "error"; message: string };

/** A source's text as `fetch` returns it. */
export interface SourceText {
  title: string;
  text: string;
  /** Whether `text` is the whole document or only the cited passage. */
  whole: boolean;
}

/**
 * Reads a `tools/call` result: `structuredContent` first (the answer as data), `content`'s text
 * otherwise, as the MCP Apps guidance asks (hosts differ in which they pass); `isError` is an error.
 */
export function readToolResult(result: unknown): CardResult {
  if (!isObject(result)) return { kind: "error", message: "The host sent no result." };
  const text = textOf(result.content);
  if (result.isError === true) return { kind: "error", message: text || "The tool call failed." };
  const structured = result.structuredContent;
  if (isObject(structured) && typeof structured.answer === "string") {
    return {
      kind: "answer",
      answer: structured.answer,
      queryId: stringOrNull(structured.query_id),
      mode: stringOrNull(structured.mode),
      sources: Array.isArray(structured.sources) ? structured.sources.flatMap(readSource) : [],
      steps: Array.isArray(structured.steps) ? structured.steps.filter((step): step is string => typeof step === "string") : [],
    };
  }
  return text ? { kind: "text", text } : { kind: "error", message: "The result has nothing to show." };
}

/** Reads a `fetch` result into the text to show, or what went wrong. */
export function readSourceText(result: unknown): SourceText | { error: string } {
  if (!isObject(result)) return { error: "The host sent no result." };
  const text = textOf(result.content);
  if (result.isError === true) return { error: text || "The source could not be read." };
  const structured = isObject(result.structuredContent) ? result.structuredContent : parsedObject(text);
  if (!structured || typeof structured.text !== "string") return { error: "The source's text did not come back." };
  const metadata = isObject(structured.metadata) ? structured.metadata : {};
  return { title: stringOrNull(structured.title) ?? "", text: structured.text, whole: metadata.text_is === "document" };
}

function readSource(value: unknown): CardSource[] {
  if (!isObject(value) || typeof value.n !== "number") return [];
  return [
    {
      n: value.n,
      filename: stringOrNull(value.filename),
      title: stringOrNull(value.title),
      page: typeof value.page === "number" ? value.page : null,
      snippet: stringOrNull(value.snippet),
      url: stringOrNull(value.url) ?? "",
      cited: value.cited === true,
      id: stringOrNull(value.id),
    },
  ];
}

/** The text blocks of a result's `content`, joined. */
function textOf(content: unknown): string {
  if (!Array.isArray(content)) return "";
  return content
    .filter((block): block is { type: "text"; text: string } => isObject(block) && block.type === "text" && typeof block.text === "string")
    .map((block) => block.text)
    .join("\n\n");
}

function stringOrNull(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

/** A JSON object written as text (`fetch`'s `content` mirrors its `structuredContent`). */
function parsedObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : null;
  } catch {
    return null;
  }
}

/** The source a citation marker points at: `[n]`, `[^n]`, `[n, m]` by number; `[file.pdf, p. 4]` by file (and page). */
export function sourceOfMarker(marker: string, sources: readonly CardSource[]): CardSource | undefined {
  const numbered = /^[[【]\^?(\d{1,4})/.exec(marker);
  if (numbered) return sources.find((source) => source.n === Number(numbered[1]));
  const inner = marker.slice(1, -1).trim().toLowerCase();
  const page = /\bp(?:age|\.)?\s*(\d+)/.exec(inner)?.[1];
  const named = sources.filter((source) => {
    const name = (source.filename ?? source.title ?? "").toLowerCase();
    return name !== "" && inner.startsWith(name);
  });
  return named.find((source) => page !== undefined && source.page === Number(page)) ?? named[0];
}
