import { type RankTable, rankOf } from "./rank-table.js";

// o200k's pre-tokenizer (tiktoken's pattern for o200k_base): text is split into pieces that
// byte-pair encoding never merges across. tiktoken runs it with Rust's regex, whose \s is Unicode's
// White_Space; JavaScript's \s differs (it takes U+FEFF, the byte order mark, and leaves U+0085),
// so the pattern names \p{White_Space} where tiktoken's says \s.
const CONTRACTION = String.raw`(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?`;
const O200K_PIECES = new RegExp(
  String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+${CONTRACTION}` +
    String.raw`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*${CONTRACTION}` +
    String.raw`|\p{N}{1,3}| ?[^\p{White_Space}\p{L}\p{N}]+[\r\n/]*|\p{White_Space}*[\r\n]+` +
    String.raw`|\p{White_Space}+(?!\P{White_Space})|\p{White_Space}+`,
  "gu",
);

// Scratch space reused by every count in this thread (counting is synchronous).
let utf8 = new Uint8Array(1024);
let starts = new Int32Array(1025);
let ranks = new Float64Array(1025);

/**
 * Counts the o200k tokens of `text`, as tiktoken counts plain text: special
 * token strings such as "<|endoftext|>" are ordinary characters. It allocates nothing per piece
 * but the regular expression's match, and reads ranks from typed arrays.
 */
export function countO200k(table: RankTable, text: string): number {
  let count = 0;
  let at = 0;
  while (at < text.length) {
    let end = asciiPieceEnd(text, at);
    let length: number;
    if (end > at) {
      length = encodeAscii(text, at, end);
    } else {
      // Not decidable on ASCII alone: the pattern itself, from this piece boundary on.
      O200K_PIECES.lastIndex = at;
      const match = O200K_PIECES.exec(text) as RegExpExecArray;
      end = at + match[0].length;
      length = encodeUtf8(match[0]);
    }
    at = end;
    if (length === 1 || rankOf(table, utf8, 0, length) >= 0) count += 1;
    else count += mergeCount(table, length);
  }
  return count;
}

// ASCII classes, as the pattern's Unicode classes see ASCII: \p{Lu}, \p{Ll}, \p{N}, \s, and the
// rest (punctuation and controls: [^\s\p{L}\p{N}]).
const UPPER = 1;
const LOWER = 2;
const DIGIT = 3;
const SPACE = 4; // \s other than \r and \n
const NEWLINE = 5;
const OTHER = 6;
const NON_ASCII = 0;
const CLASS = new Uint8Array(128).map((_, code) => {
  if (code >= 65 && code <= 90) return UPPER;
  if (code >= 97 && code <= 122) return LOWER;
  if (code >= 48 && code <= 57) return DIGIT;
  if (code === 10 || code === 13) return NEWLINE;
  if ((code >= 9 && code <= 12) || code === 32) return SPACE;
  return OTHER;
});
const classAt = (text: string, index: number): number => {
  if (index >= text.length) return -1; // end of text
  const code = text.charCodeAt(index);
  return code < 128 ? (CLASS[code] as number) : NON_ASCII;
};
const isLetter = (type: number) => type === UPPER || type === LOWER;

/**
 * Where the o200k pattern's match starting at `at` ends, worked out by hand for ASCII (most text,
 * and the regular expression's Unicode classes cost about 160 ns a piece); `at` when any character
 * it depends on is not ASCII. The alternatives are tried in the pattern's order.
 */
function asciiPieceEnd(text: string, at: number): number {
  const first = classAt(text, at);
  if (first === NON_ASCII) return at;
  // 1 and 2: [^\r\n\p{L}\p{N}]? then letters: [Lu]*[Ll]+ or [Lu]+[Ll]*, then a contraction.
  const second = classAt(text, at + 1);
  const prefixed = (first === SPACE || first === OTHER) && isLetter(second);
  if (prefixed || isLetter(first)) {
    let end = prefixed ? at + 1 : at;
    while (classAt(text, end) === UPPER) end += 1;
    while (classAt(text, end) === LOWER) end += 1;
    if (classAt(text, end) === NON_ASCII) return at; // a Unicode letter or mark would continue it
    return contractionEnd(text, end);
  }
  if (second === NON_ASCII && (first === SPACE || first === OTHER)) return at;
  // 3: \p{N}{1,3}
  if (first === DIGIT) {
    let end = at + 1;
    while (end < at + 3 && classAt(text, end) === DIGIT) end += 1;
    if (end < at + 3 && classAt(text, end) === NON_ASCII) return at;
    return end;
  }
  // 4: " ?[^\s\p{L}\p{N}]+[\r\n/]*"
  if (first === OTHER || (text.charCodeAt(at) === 32 && second === OTHER)) {
    let end = first === OTHER ? at + 1 : at + 2;
    while (classAt(text, end) === OTHER) end += 1;
    for (let code = text.charCodeAt(end); code === 10 || code === 13 || code === 47; code = text.charCodeAt(end)) end += 1;
    if (classAt(text, end) === NON_ASCII) return at;
    return end;
  }
  // 5, 6, 7: whitespace runs.
  let end = at;
  let lastNewline = -1;
  for (let type = first; type === SPACE || type === NEWLINE; type = classAt(text, end)) {
    if (type === NEWLINE) lastNewline = end;
    end += 1;
  }
  if (classAt(text, end) === NON_ASCII) return at; // Unicode whitespace would continue the run
  if (lastNewline >= 0) return lastNewline + 1; // \s*[\r\n]+
  if (end === text.length) return end; // \s+(?!\S)
  return end - at >= 2 ? end - 1 : end; // \s+(?!\S) leaves the last space to the next piece; else \s+
}

/** The end of an optional contraction ('s, 'd, 'm, 't, 'll, 've, 're, any case) at `at`. */
function contractionEnd(text: string, at: number): number {
  if (text.charCodeAt(at) !== 39) return at;
  const one = text.charCodeAt(at + 1) | 0x20;
  if (one === 115 || one === 100 || one === 109 || one === 116) return at + 2; // s d m t
  const two = text.charCodeAt(at + 2) | 0x20;
  if ((one === 108 && two === 108) || (one === 118 && two === 101) || (one === 114 && two === 101)) return at + 3; // ll ve re
  return at;
}

/** Copies ASCII `text[from, to)` into the scratch buffer as bytes. */
function encodeAscii(text: string, from: number, to: number): number {
  const length = to - from;
  if (utf8.length < length) utf8 = new Uint8Array(length * 2);
  for (let index = 0; index < length; index += 1) utf8[index] = text.charCodeAt(from + index);
  return length;
}

/** Writes `piece` as UTF-8 into the scratch buffer (lone surrogates as U+FFFD, as TextEncoder does). */
function encodeUtf8(piece: string): number {
  if (utf8.length < piece.length * 3) utf8 = new Uint8Array(piece.length * 3);
  let length = 0;
  for (let index = 0; index < piece.length; index += 1) {
    let code = piece.charCodeAt(index);
    if (code < 0x80) {
      utf8[length++] = code;
      continue;
    }
    if (code < 0x800) {
      utf8[length++] = 0xc0 | (code >> 6);
      utf8[length++] = 0x80 | (code & 0x3f);
      continue;
    }
    if (code >= 0xd800 && code <= 0xdfff) {
      const next = piece.charCodeAt(index + 1);
      if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        code = 0x10000 + ((code - 0xd800) << 10) + (next - 0xdc00);
        index += 1;
        utf8[length++] = 0xf0 | (code >> 18);
        utf8[length++] = 0x80 | ((code >> 12) & 0x3f);
        utf8[length++] = 0x80 | ((code >> 6) & 0x3f);
        utf8[length++] = 0x80 | (code & 0x3f);
        continue;
      }
      code = 0xfffd;
    }
    utf8[length++] = 0xe0 | (code >> 12);
    utf8[length++] = 0x80 | ((code >> 6) & 0x3f);
    utf8[length++] = 0x80 | (code & 0x3f);
  }
  return length;
}

/** Pieces longer than this (in bytes) are merged with a heap: the plain scan is quadratic. */
const LONG_PIECE = 128;

/**
 * tiktoken's byte-pair merge over the scratch buffer's first `length` bytes: repeatedly join the
 * adjacent pair of parts with the lowest rank (the leftmost on a tie) until no pair is a token;
 * the parts left are the tokens.
 */
function mergeCount(table: RankTable, length: number): number {
  if (length > LONG_PIECE) return heapMergeCount(table, length);
  if (starts.length < length + 1) {
    starts = new Int32Array(length + 1);
    ranks = new Float64Array(length + 1);
  }
  // parts: starts[0..parts), each part running to the next start (the last to `length`).
  let parts = length;
  for (let index = 0; index < length; index += 1) starts[index] = index;
  starts[length] = length;
  const pairRank = (index: number): number => {
    if (index + 2 > parts) return Infinity;
    const rank = rankOf(table, utf8, starts[index] as number, starts[index + 2] as number);
    return rank < 0 ? Infinity : rank;
  };
  for (let index = 0; index < parts - 1; index += 1) ranks[index] = pairRank(index);
  ranks[parts - 1] = Infinity;
  while (parts > 1) {
    let lowest = Infinity;
    let at = -1;
    for (let index = 0; index < parts - 1; index += 1) {
      if ((ranks[index] as number) < lowest) {
        lowest = ranks[index] as number;
        at = index;
      }
    }
    if (at < 0) break;
    // Join parts `at` and `at + 1`: drop the start of `at + 1`.
    starts.copyWithin(at + 1, at + 2, parts + 1);
    ranks.copyWithin(at + 1, at + 2, parts);
    parts -= 1;
    ranks[at] = pairRank(at);
    if (at > 0) ranks[at - 1] = pairRank(at - 1);
  }
  return parts;
}

/**
 * The same merge as {@link mergeCount} for long pieces, in O(n log n): a 16,000-letter word took a
 * quarter of a second with the scan (a request could block the event loop with one), a few
 * milliseconds with this. Parts form a linked list by their first byte; a binary heap holds the
 * pairs by (rank, position), so the lowest rank, leftmost first, is merged as the scan would;
 * entries made stale by a merge are skipped when they come up.
 */
function heapMergeCount(table: RankTable, length: number): number {
  const next = new Int32Array(length + 1);
  const previous = new Int32Array(length + 1);
  for (let index = 0; index <= length; index += 1) {
    next[index] = index + 1;
    previous[index] = index - 1;
  }
  const pairRank = new Float64Array(length).fill(Infinity);
  const alive = new Uint8Array(length).fill(1);
  const heap = new MinHeap(length * 3);
  const rankAt = (part: number): number => {
    const second = next[part] as number;
    if (second >= length) return Infinity;
    const rank = rankOf(table, utf8, part, next[second] as number);
    return rank < 0 ? Infinity : rank;
  };
  for (let part = 0; part < length - 1; part += 1) {
    pairRank[part] = rankAt(part);
    if (pairRank[part] !== Infinity) heap.push(pairRank[part] as number, part);
  }
  let parts = length;
  while (heap.size > 0) {
    const rank = heap.topRank();
    const part = heap.pop();
    if (!alive[part] || pairRank[part] !== rank) continue; // stale
    const second = next[part] as number;
    alive[second] = 0;
    next[part] = next[second] as number;
    if ((next[second] as number) < length) previous[next[second] as number] = part;
    parts -= 1;
    pairRank[part] = rankAt(part);
    if (pairRank[part] !== Infinity) heap.push(pairRank[part] as number, part);
    const before = previous[part] as number;
    if (before >= 0) {
      pairRank[before] = rankAt(before);
      if (pairRank[before] !== Infinity) heap.push(pairRank[before] as number, before);
    }
  }
  return parts;
}

/** Whether pair (rank, position) comes before pair (otherRank, otherPosition): lower rank, then leftmost. */
const before = (rank: number, position: number, otherRank: number, otherPosition: number): boolean =>
  rank < otherRank || (rank === otherRank && position < otherPosition);

/** A binary min-heap of (rank, position) pairs, ordered by rank, then position. */
class MinHeap {
  private readonly ranks: Float64Array;
  private readonly positions: Int32Array;
  size = 0;

  constructor(capacity: number) {
    this.ranks = new Float64Array(capacity);
    this.positions = new Int32Array(capacity);
  }

  push(rank: number, position: number): void {
    let at = this.size++;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!before(rank, position, this.ranks[parent] as number, this.positions[parent] as number)) break;
      this.ranks[at] = this.ranks[parent] as number;
      this.positions[at] = this.positions[parent] as number;
      at = parent;
    }
    this.ranks[at] = rank;
    this.positions[at] = position;
  }

  /** Whether entry `index` comes before entry `other`. */
  private comesFirst(index: number, other: number): boolean {
    const { ranks, positions } = this;
    return before(ranks[index] as number, positions[index] as number, ranks[other] as number, positions[other] as number);
  }

  topRank(): number {
    return this.ranks[0] as number;
  }

  /** Removes the first pair; returns its position. */
  pop(): number {
    const top = this.positions[0] as number;
    const size = --this.size;
    const rank = this.ranks[size] as number;
    const position = this.positions[size] as number;
    let at = 0;
    while (true) {
      let child = at * 2 + 1;
      if (child >= size) break;
      const right = child + 1;
      if (right < size && this.comesFirst(right, child)) child = right;
      if (!before(this.ranks[child] as number, this.positions[child] as number, rank, position)) break;
      this.ranks[at] = this.ranks[child] as number;
      this.positions[at] = this.positions[child] as number;
      at = child;
    }
    this.ranks[at] = rank;
    this.positions[at] = position;
    return top;
  }
}

const isPrintableAscii = (code: number) => code > 32 && code < 127;

/**
 * A place near `index` where `text` can be cut without changing its count: a space between two
 * printable ASCII characters. No piece of the pattern holds a space after its first character,
 * and none crosses a space from a non-space, so counting the two sides apart gives the same sum.
 * Looks back up to `window` characters, then forward; `text.length` when there is no such place.
 */
export function pieceBoundaryNear(text: string, index: number, window = 4096): number {
  const safe = (at: number) =>
    text.charCodeAt(at) === 32 && isPrintableAscii(text.charCodeAt(at - 1)) && isPrintableAscii(text.charCodeAt(at + 1));
  for (let at = index; at > index - window && at > 0; at -= 1) if (safe(at)) return at;
  for (let at = index + 1; at < text.length - 1; at += 1) if (safe(at)) return at;
  return text.length;
}
