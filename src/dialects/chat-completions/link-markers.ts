import { namedDocument } from "../../answer/cite-sources.js";
import { codePointLength } from "../../answer/code-points.js";
import { markdownUrl, type SourceLinker } from "../../answer/source-links.js";

/** Text inserted into the answer, at a code-point position of the text as the upstream wrote it. */
export interface Insertion {
  at: number;
  length: number;
}

/**
 * The state of turning name markers into Markdown links as text streams by: text held back from
 * an opening bracket until the marker is complete (and the next character shows it is not already
 * a link), whether the text so far ends inside code, and what was inserted where.
 */
export interface MarkerLinks {
  held: string;
  /** Code points of upstream text already passed through (emitted or held), before `held`. */
  consumed: number;
  inCode: boolean;
  insertions: Insertion[];
}

/** A fresh state. */
export function newMarkerLinks(): MarkerLinks {
  return { held: "", consumed: 0, inCode: false, insertions: [] };
}

/** Longest marker held back before it is given up as plain text (as the citation parser bounds them). */
const MAX_MARKER = 300;

/**
 * Passes text through, turning each marker that names a document (`[handbook.pdf, p. 4]`) into a
 * Markdown link to it (`[handbook.pdf, p. 4](url)`) when the link is one a browser can open. Text
 * after an unclosed `[` is held until the marker is decided (never sent twice, never lost);
 * `final` releases everything. Markers in code and existing links are left alone.
 */
export function linkMarkers(state: MarkerLinks, text: string, linker: SourceLinker, final: boolean): string {
  const input = state.held + text;
  state.held = "";
  let out = "";
  let index = 0;
  while (index < input.length) {
    const char = input[index] as string;
    if (char === "`") state.inCode = !state.inCode;
    if (char !== "[" || state.inCode) {
      out += char;
      index += 1;
      continue;
    }
    const close = input.indexOf("]", index + 1);
    const newline = input.indexOf("\n", index + 1);
    const open = input.indexOf("[", index + 1);
    const broken = (newline >= 0 && (close < 0 || newline < close)) || (open >= 0 && (close < 0 || open < close));
    if (broken || (close < 0 && input.length - index > MAX_MARKER)) {
      out += char;
      index += 1;
      continue;
    }
    if (close < 0 || close + 1 >= input.length) {
      if (final) {
        out += input.slice(index);
        index = input.length;
        break;
      }
      // Undecided: wait for the closing bracket and the character after it.
      state.held = input.slice(index);
      break;
    }
    const marker = input.slice(index, close + 1);
    out += marker;
    index = close + 1;
    const next = input[index];
    if (next === "(" || next === ":" || next === "[") continue;
    const named = namedDocument(marker.slice(1, -1));
    const link = named ? linker({ filename: named.filename, title: null, page: named.page, snippet: null }) : null;
    if (!link?.clickable) continue;
    const inserted = `(${markdownUrl(link.url)})`;
    state.insertions.push({ at: state.consumed + codePointLength(input.slice(0, index)), length: codePointLength(inserted) });
    out += inserted;
  }
  state.consumed += codePointLength(input.slice(0, input.length - state.held.length));
  return out;
}

/** A code-point position of the upstream's text, moved past what was inserted before it. */
export function shifted(position: number, insertions: readonly Insertion[]): number {
  let moved = position;
  for (const insertion of insertions) if (insertion.at < position) moved += insertion.length;
  return moved;
}
