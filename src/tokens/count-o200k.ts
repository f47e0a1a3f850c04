import { NOT_ASCII, type RankTable, rankOf, rankOfAscii } from "./rank-table.js";
import { scannedPieceEnd } from "./scan-piece.js";
import { UNICODE_16 } from "./unicode-classes.js";

// o200k's pre-tokenizer (tiktoken's pattern for o200k_base): text is split into pieces that
// byte-pair encoding never merges across. tiktoken runs it with Rust's regex, so the classes are
// Unicode 16.0's (unicode-classes.ts) rather than this runtime's, \s is Unicode's White_Space
// (JavaScript's \s takes U+FEFF, the byte order mark, and leaves U+0085), and the contractions'
// (?i:'s|...) folds case as Unicode does: "'ſ" (U+017F, long s) is a contraction there. The pattern
// is two here, each short enough for V8 to optimize (unicode-classes.ts): its two word alternatives,
// then the rest. Tried in that order at one place, they match what the whole pattern matches.
const { letterOrNumber: LN, number: N, whiteSpace: S, upperOrCaseless: UPPER, lowerOrCaseless: LOWER } = UNICODE_16;
const CONTRACTION = String.raw`(?:'(?:[sS\u017F]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?`;
const WORD_PIECE = new RegExp(
  String.raw`[^\r\n${LN}]?[${UPPER}]*[${LOWER}]+${CONTRACTION}|[^\r\n${LN}]?[${UPPER}]+[${LOWER}]*${CONTRACTION}`,
  "uy",
);
const OTHER_PIECE = new RegExp(
  String.raw`[${N}]{1,3}| ?[^${S}${LN}]+[\r\n/]*|[${S}]*[\r\n]+|[${S}]+(?![^${S}])|[${S}]+`,
  "uy",
);

/** Where the pattern's match at `at` ends (`at` < `text.length`: some alternative always matches). */
function patternPieceEnd(text: string, at: number): number {
  WORD_PIECE.lastIndex = at;
  if (WORD_PIECE.test(text)) return WORD_PIECE.lastIndex;
  OTHER_PIECE.lastIndex = at;
  if (OTHER_PIECE.test(text)) return OTHER_PIECE.lastIndex;
  throw new Error(`the o200k pattern matched nothing at ${at}`);
}

// Scratch space reused by every count in this thread (counting is synchronous).
let utf8 = new Uint8Array(1024);
let starts = new Int32Array(1025);
let ranks = new Int32Array(1025);

/**
 * Counts the o200k tokens of `text`, as tiktoken counts plain text: special
 * token strings such as "<|endoftext|>" are ordinary characters. It allocates nothing per piece
 * but the regular expression's match, and reads ranks from typed arrays.
 */
export function countO200k(table: RankTable, text: string): number {
  let count = 0;
  let at = 0;
  while (at < text.length) {
    let end = scannedPieceEnd(text, at);
    let length: number;
    if (end > at) {
      // Most pieces are ASCII and one token, looked up from the string itself; the rest go by their bytes.
      if (end - at === 1 && text.charCodeAt(at) < 128) {
        count += 1;
        at = end;
        continue;
      }
      const rank = rankOfAscii(table, text, at, end);
      if (rank >= 0) {
        count += 1;
        at = end;
        continue;
      }
      length = rank === NOT_ASCII ? encodeUtf8(text, at, end) : encodeAscii(text, at, end);
    } else {
      // Not decidable by the scanner: the pattern itself, from this piece boundary on.
      end = patternPieceEnd(text, at);
      length = encodeUtf8(text, at, end);
    }
    at = end;
    if (length === 1 || rankOf(table, utf8, 0, length) >= 0) count += 1;
    else count += mergeCount(table, length);
  }
  return count;
}

/** Copies ASCII `text[from, to)` into the scratch buffer as bytes. */
function encodeAscii(text: string, from: number, to: number): number {
  const length = to - from;
  if (utf8.length < length) utf8 = new Uint8Array(length * 2);
  for (let index = 0; index < length; index += 1) utf8[index] = text.charCodeAt(from + index);
  return length;
}

/** Writes `text[from, to)` as UTF-8 into the scratch buffer (lone surrogates as U+FFFD, as TextEncoder does). */
function encodeUtf8(text: string, from: number, to: number): number {
  if (utf8.length < (to - from) * 3) utf8 = new Uint8Array((to - from) * 3);
  let length = 0;
  for (let index = from; index < to; index += 1) {
    let code = text.charCodeAt(index);
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
      const next = index + 1 < to ? text.charCodeAt(index + 1) : 0;
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

/** A pair that is no token: ranks are below it. */
const NONE = 0x7fffffff;

/** The rank of the scratch buffer's bytes `[from, to)` as one token; {@link NONE} when they are not one. */
function pairRank(table: RankTable, from: number, to: number): number {
  const rank = to - from === 2
    ? (table.pairs[((utf8[from] as number) << 8) | (utf8[from + 1] as number)] as number) - 1
    : rankOf(table, utf8, from, to);
  return rank < 0 ? NONE : rank;
}

/**
 * tiktoken's byte-pair merge over the scratch buffer's first `length` bytes: repeatedly join the
 * adjacent pair of parts with the lowest rank (the leftmost on a tie) until no pair is a token;
 * the parts left are the tokens.
 */
function mergeCount(table: RankTable, length: number): number {
  if (length > LONG_PIECE) return heapMergeCount(table, length);
  if (starts.length < length + 1) {
    starts = new Int32Array(length + 1);
    ranks = new Int32Array(length + 1);
  }
  const start = starts;
  const rank = ranks;
  // parts: start[0..parts), each part running to the next start (the last to `length`);
  // rank[index]: the rank of parts index and index + 1 joined.
  let parts = length;
  for (let index = 0; index < length; index += 1) start[index] = index;
  start[length] = length;
  for (let index = 0; index < parts - 1; index += 1) rank[index] = pairRank(table, index, index + 2);
  while (parts > 1) {
    let lowest = NONE;
    let at = -1;
    for (let index = 0; index < parts - 1; index += 1) {
      if ((rank[index] as number) < lowest) {
        lowest = rank[index] as number;
        at = index;
      }
    }
    if (at < 0) break;
    // Join parts `at` and `at + 1`: drop the start of `at + 1` and the rank of the pair it began.
    for (let index = at + 1; index < parts; index += 1) start[index] = start[index + 1] as number;
    for (let index = at + 1; index < parts - 2; index += 1) rank[index] = rank[index + 1] as number;
    parts -= 1;
    rank[at] = at + 2 <= parts ? pairRank(table, start[at] as number, start[at + 2] as number) : NONE;
    if (at > 0) rank[at - 1] = pairRank(table, start[at - 1] as number, start[at + 1] as number);
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
