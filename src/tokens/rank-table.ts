import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

/**
 * The o200k byte-pair ranks in typed arrays: an open-addressing hash table from a token's bytes
 * to its rank, and every token's bytes back to back. A slot is 16 bytes: rank + 1 (0: empty),
 * length, and the token's first 8 bytes, so looking up a word costs one cache line (the counter
 * runs between requests, when the table has left the CPU's caches). It lives outside the
 * JavaScript heap, with nothing in it for the garbage collector to trace (gpt-tokenizer's own
 * tables are 200,000 strings in a Map).
 */
export interface RankTable {
  /** Four Int32 per slot: rank + 1, length, bytes 0-3, bytes 4-7 (little-endian, zero-padded). */
  readonly slots: Int32Array;
  /** All tokens' bytes, for the part of tokens longer than 8 bytes. */
  readonly bytes: Uint8Array;
  readonly tokenStart: Uint32Array;
  /**
   * Rank + 1 of every two-byte token (0: none), by `first << 8 | second`: a byte-pair merge starts
   * by looking up every adjacent pair of bytes, here without hashing them (256 KB).
   */
  readonly pairs: Int32Array;
  readonly size: number;
}

const SLOT_INTS = 4;

/** FNV-1a over `bytes[from, to)`: the table's hash. */
function hashBytes(bytes: Uint8Array, from: number, to: number): number {
  let hash = 0x811c9dc5;
  for (let index = from; index < to; index += 1) hash = Math.imul(hash ^ (bytes[index] as number), 0x01000193);
  return hash >>> 0;
}

/** Bytes `from + skip .. from + skip + 3` (those before `to`) as one little-endian Int32. */
function word(bytes: Uint8Array, from: number, to: number, skip: number): number {
  let value = 0;
  for (let index = Math.min(to - from, skip + 4) - 1; index >= skip; index -= 1) {
    value = (value << 8) | (bytes[from + index] as number);
  }
  return value | 0;
}

/** The rank of the token whose bytes are `bytes[from, to)`, or -1 when no token has them. */
export function rankOf(table: RankTable, bytes: Uint8Array, from: number, to: number): number {
  const { slots } = table;
  const length = to - from;
  const low = word(bytes, from, to, 0);
  const high = length > 4 ? word(bytes, from, to, 4) : 0;
  for (let slot = hashBytes(bytes, from, to) | 0; ; slot += 1) {
    slot = matchingSlot(slots, slot, length, low, high);
    if (slot < 0) return -1;
    const rank = (slots[slot * SLOT_INTS] as number) - 1;
    if (length <= 8 || sameTail(table, rank, bytes, from, length)) return rank;
  }
}

/** What {@link rankOfAscii} returns for a piece that is not all ASCII. */
export const NOT_ASCII = -2;

/**
 * {@link rankOf} of characters `text[from, to)` when they are ASCII, read straight from the string:
 * most pieces are one token, found without first copying them to bytes. The same hash, words and
 * slots. {@link NOT_ASCII} when a character is not.
 */
export function rankOfAscii(table: RankTable, text: string, from: number, to: number): number {
  const { slots } = table;
  const length = to - from;
  let hash = 0x811c9dc5;
  let low = 0;
  let high = 0;
  for (let index = 0; index < length; index += 1) {
    const code = text.charCodeAt(from + index);
    if (code > 127) return NOT_ASCII;
    hash = Math.imul(hash ^ code, 0x01000193);
    if (index < 4) low |= code << (index * 8);
    else if (index < 8) high |= code << ((index - 4) * 8);
  }
  for (let slot = hash; ; slot += 1) {
    slot = matchingSlot(slots, slot, length, low, high);
    if (slot < 0) return -1;
    const rank = (slots[slot * SLOT_INTS] as number) - 1;
    if (length <= 8 || sameAsciiTail(table, rank, text, from, length)) return rank;
  }
}

/**
 * From slot `slot` on (wrapping), the first whose token has this length and these first 8 bytes;
 * -1 when an empty slot comes first.
 */
function matchingSlot(slots: Int32Array, slot: number, length: number, low: number, high: number): number {
  const mask = slots.length / SLOT_INTS - 1;
  for (let index = slot & mask; ; index = (index + 1) & mask) {
    const at = index * SLOT_INTS;
    if (slots[at] === 0) return -1;
    if (slots[at + 1] === length && slots[at + 2] === low && slots[at + 3] === high) return index;
  }
}

/** Whether token `rank`'s bytes after the first 8 equal the piece's characters. */
function sameAsciiTail(table: RankTable, rank: number, text: string, from: number, length: number): boolean {
  const start = table.tokenStart[rank] as number;
  for (let index = 8; index < length; index += 1) if (table.bytes[start + index] !== text.charCodeAt(from + index)) return false;
  return true;
}

/** Whether token `rank`'s bytes after the first 8 equal those of the piece. */
function sameTail(table: RankTable, rank: number, bytes: Uint8Array, from: number, length: number): boolean {
  const start = table.tokenStart[rank] as number;
  for (let index = 8; index < length; index += 1) if (table.bytes[start + index] !== bytes[from + index]) return false;
  return true;
}

const BASE64 = new Int8Array(128).fill(-1);
for (const [index, char] of [..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"].entries()) BASE64[char.charCodeAt(0)] = index;

/**
 * Reads a `.tiktoken` file (one `base64-bytes rank` line per token, as OpenAI publishes them) into
 * a table. Decoding by hand keeps the 200,000 lines from becoming 200,000 objects.
 */
export function parseTiktoken(text: string): RankTable {
  let maxRank = 0;
  let byteCount = 0;
  const lines = forEachLine(text, (start, space, end) => {
    maxRank = Math.max(maxRank, Number(text.slice(space + 1, end)));
    byteCount += Math.floor(((space - start) * 3) / 4);
  });
  const bytes = new Uint8Array(byteCount);
  const tokenStart = new Uint32Array(maxRank + 1);
  let slotCount = 1;
  while (slotCount < lines * 2) slotCount *= 2;
  const slots = new Int32Array(slotCount * SLOT_INTS);
  const pairs = new Int32Array(65536);
  let offset = 0;
  forEachLine(text, (start, space, end) => {
    const rank = Number(text.slice(space + 1, end));
    if (!Number.isInteger(rank) || rank < 0) throw new Error(`bad rank in line: ${text.slice(start, end)}`);
    const first = offset;
    let bits = 0;
    let bitCount = 0;
    for (let index = start; index < space; index += 1) {
      const value = BASE64[text.charCodeAt(index)] ?? -1;
      if (value < 0) break; // "=" padding ends the token
      bits = ((bits << 6) | value) & 0xffffff;
      bitCount += 6;
      if (bitCount >= 8) {
        bitCount -= 8;
        bytes[offset++] = (bits >> bitCount) & 0xff;
      }
    }
    tokenStart[rank] = first;
    if (offset - first === 2) pairs[((bytes[first] as number) << 8) | (bytes[first + 1] as number)] = rank + 1;
    let slot = hashBytes(bytes, first, offset) & (slotCount - 1);
    while (slots[slot * SLOT_INTS] !== 0) slot = (slot + 1) & (slotCount - 1);
    const at = slot * SLOT_INTS;
    slots[at] = rank + 1;
    slots[at + 1] = offset - first;
    slots[at + 2] = word(bytes, first, offset, 0);
    slots[at + 3] = offset - first > 4 ? word(bytes, first, offset, 4) : 0;
  });
  return { slots, bytes: bytes.slice(0, offset), tokenStart, pairs, size: lines };
}

/** Calls `visit(start, space, end)` for each non-empty `token rank` line; returns how many. */
function forEachLine(text: string, visit: (start: number, space: number, end: number) => void): number {
  let lines = 0;
  for (let start = 0; start < text.length; ) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    const space = text.indexOf(" ", start);
    if (end > start) {
      if (space < start || space > end) throw new Error(`bad line: ${text.slice(start, end)}`);
      visit(start, space, end);
      lines += 1;
    }
    start = end + 1;
  }
  return lines;
}

let o200k: RankTable | undefined;

/** The o200k_base table, read once per thread from the file gpt-tokenizer ships. */
export function o200kRanks(): RankTable {
  o200k ??= parseTiktoken(readFileSync(createRequire(import.meta.url).resolve("gpt-tokenizer/data/o200k_base.tiktoken"), "latin1"));
  return o200k;
}
