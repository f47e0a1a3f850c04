// The o200k pre-tokenizer's pattern (count-o200k.ts), worked out by hand where the characters allow.
import { UNICODE_16 } from "./unicode-classes.js";

// Character classes, as the pattern's Unicode 16.0 classes see them (unicode-classes.ts): \p{Lu},
// \p{Ll}, \p{N}, \s, and the rest (punctuation, symbols and controls: [^\s\p{L}\p{N}]). ASCII is
// classed in full; beyond it, only punctuation and symbols (no letter, number, mark or White_Space:
// a dash, a curly quote, an arrow), which end every letter, number and space run just as ASCII
// punctuation does. Any other character is UNKNOWN, and the regular expression decides the piece
// it touches.
const UPPER = 1;
const LOWER = 2;
const DIGIT = 3;
const SPACE = 4; // \s other than \r and \n
const NEWLINE = 5;
const OTHER = 6;
const UNKNOWN = 0;
/** Characters below this are classed by the table (Latin-1, general punctuation, arrows, CJK punctuation). */
const CLASSED = 0x3100;
const { whiteSpace, letterOrNumber, mark } = UNICODE_16;
const PUNCTUATION = new RegExp(`^[^${whiteSpace}${letterOrNumber}${mark}]$`, "u");
const CLASS = new Uint8Array(CLASSED).map((_, code) => {
  if (code >= 65 && code <= 90) return UPPER;
  if (code >= 97 && code <= 122) return LOWER;
  if (code >= 48 && code <= 57) return DIGIT;
  if (code === 10 || code === 13) return NEWLINE;
  if ((code >= 9 && code <= 12) || code === 32) return SPACE;
  if (code < 128) return OTHER;
  return PUNCTUATION.test(String.fromCharCode(code)) ? OTHER : UNKNOWN;
});
const classAt = (text: string, index: number): number => {
  if (index >= text.length) return -1; // end of text
  const code = text.charCodeAt(index);
  return code < CLASSED ? (CLASS[code] as number) : UNKNOWN;
};
const isLetter = (type: number) => type === UPPER || type === LOWER;

/**
 * Where the o200k pattern's match starting at `at` ends, worked out by hand from the classes above
 * (most text: the regular expression's Unicode classes cost about 160 ns a piece); `at` when any
 * character it depends on is UNKNOWN. The alternatives are tried in the pattern's order.
 */
export function scannedPieceEnd(text: string, at: number): number {
  const first = classAt(text, at);
  if (first === UNKNOWN) return at;
  // 1 and 2: [^\r\n\p{L}\p{N}]? then letters: [Lu]*[Ll]+ or [Lu]+[Ll]*, then a contraction.
  const second = classAt(text, at + 1);
  const prefixed = (first === SPACE || first === OTHER) && isLetter(second);
  if (prefixed || isLetter(first)) {
    let end = prefixed ? at + 1 : at;
    while (classAt(text, end) === UPPER) end += 1;
    while (classAt(text, end) === LOWER) end += 1;
    if (classAt(text, end) === UNKNOWN) return at; // a Unicode letter or mark would continue it
    return contractionEnd(text, end);
  }
  if (second === UNKNOWN && (first === SPACE || first === OTHER)) return at;
  // 3: \p{N}{1,3}
  if (first === DIGIT) {
    let end = at + 1;
    while (end < at + 3 && classAt(text, end) === DIGIT) end += 1;
    if (end < at + 3 && classAt(text, end) === UNKNOWN) return at;
    return end;
  }
  // 4: " ?[^\s\p{L}\p{N}]+[\r\n/]*"
  if (first === OTHER || (text.charCodeAt(at) === 32 && second === OTHER)) {
    let end = first === OTHER ? at + 1 : at + 2;
    while (classAt(text, end) === OTHER) end += 1;
    for (let code = text.charCodeAt(end); code === 10 || code === 13 || code === 47; code = text.charCodeAt(end)) end += 1;
    if (classAt(text, end) === UNKNOWN) return at;
    return end;
  }
  // 5, 6, 7: whitespace runs.
  let end = at;
  let lastNewline = -1;
  for (let type = first; type === SPACE || type === NEWLINE; type = classAt(text, end)) {
    if (type === NEWLINE) lastNewline = end;
    end += 1;
  }
  if (classAt(text, end) === UNKNOWN) return at; // Unicode whitespace would continue the run
  if (lastNewline >= 0) return lastNewline + 1; // \s*[\r\n]+
  if (end === text.length) return end; // \s+(?!\S)
  return end - at >= 2 ? end - 1 : end; // \s+(?!\S) leaves the last space to the next piece; else \s+
}

/** The end of an optional contraction ('s, 'd, 'm, 't, 'll, 've, 're, any case; 's also as 'ſ) at `at`. */
function contractionEnd(text: string, at: number): number {
  if (text.charCodeAt(at) !== 39) return at;
  const one = text.charCodeAt(at + 1) | 0x20;
  if (one === 115 || one === 100 || one === 109 || one === 116 || one === 0x17f) return at + 2; // s d m t ſ
  const two = text.charCodeAt(at + 2) | 0x20;
  if ((one === 108 && two === 108) || (one === 118 && two === 101) || (one === 114 && two === 101)) return at + 3; // ll ve re
  return at;
}

