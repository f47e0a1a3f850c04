import type { Citation } from "./answer-events.js";
import { codePointOffsets } from "./code-points.js";

/** The spans of a JSON text's strings (keys and values), in code points, each from its opening quote to past its closing one. */
function stringSpans(json: string): { start: number; end: number }[] {
  const bounds: number[] = [];
  let open = -1;
  for (let index = 0; index < json.length; index += 1) {
    const char = json[index];
    if (open >= 0 && char === "\\") index += 1;
    else if (char === '"' && open < 0) open = index;
    else if (char === '"') {
      bounds.push(open, index + 1);
      open = -1;
    }
  }
  const points = codePointOffsets(json, bounds);
  const spans: { start: number; end: number }[] = [];
  for (let index = 0; index < points.length; index += 2) {
    spans.push({ start: points[index] as number, end: points[index + 1] as number });
  }
  return spans;
}

/**
 * The citations of a structured answer that are markers inside its JSON's strings
 * (docs/structured-answers.md#sources-beside-the-json): the answer core reads markers in the whole
 * text, and a JSON array of numbers (`[1, 2]`) reads like one. Spans stay as they were, over the
 * JSON text.
 */
export function citationsInStrings(json: string, citations: readonly Citation[]): Citation[] {
  const spans = stringSpans(json);
  return citations.filter((citation) => spans.some((span) => citation.start > span.start && citation.end < span.end));
}

/**
 * The JSON text without its citation markers (`X-Structured-Citations: strip`,
 * docs/structured-answers.md#markers-inside-strings): each marker inside a string goes, with one
 * space before it. The markers hold no quote or backslash of their own that could end a string,
 * so the text stays JSON; the caller parses it and validates it again.
 */
export function stripCitationMarkers(json: string, citations: readonly Citation[]): string {
  const points = [...json];
  // One marker naming two sources is two citations over one span: removed once.
  const markers = new Map(citationsInStrings(json, citations).map((citation) => [citation.start, citation]));
  const spans = [...markers.values()].sort((a, b) => b.start - a.start);
  for (const { start, end } of spans) {
    const from = points[start - 1] === " " ? start - 1 : start;
    points.splice(from, end - from);
  }
  return points.join("");
}
