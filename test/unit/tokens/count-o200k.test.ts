import { readdirSync, readFileSync } from "node:fs";
import fc from "fast-check";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { get_encoding } from "tiktoken";
import { describe, expect, it } from "vitest";
import { countO200k, pieceBoundaryNear } from "../../../src/tokens/count-o200k.js";
import { o200kRanks } from "../../../src/tokens/rank-table.js";
import { UNICODE_16 } from "../../../src/tokens/unicode-classes.js";

// OpenAI's own tokenizer (tiktoken, its Rust core built to WebAssembly) is the oracle: ours must
// agree on every text. Special-token strings count as ordinary text (nothing allowed, nothing
// refused), as the adapter counts what a client sent.
const tiktoken = get_encoding("o200k_base");
const reference = (text: string) => tiktoken.encode(text, [], []).length;
const table = o200kRanks();
const ours = (text: string) => countO200k(table, text);

// Characters where the ASCII scanner's decisions lie: every class, the contraction letters,
// "/" after punctuation, controls, and non-ASCII that continues or ends each kind of piece.
const TRICKY = [
  ..."aZb09 '\t\n\r\u000b\f/.,!-_sSlLvVrReEdDmMtT\u0000\u001f\u007f",
  "é", "—", "😀", "\u00a0", "\uFEFF", "\u0085", "\u3000", "\u0301", "日", "\u2028", "\uD800", "Ⅻ", "٣", "ǅ", "ʰ",
  // Punctuation and symbols beyond ASCII, which the scanner classes itself (scan-piece.ts).
  "“", "’", "…", "→", "×", "·", "。", "\u200b", "\u2060", "ª", "²", "\u1ab0",
  // Long s, which the contractions' case folding takes for s; letters new in Unicode 17.0, which are
  // none in tiktoken's Unicode 16.0 (one in the table's range, one beyond it); a fullwidth letter;
  // a symbol new in Unicode 16.0.
  "ſ", "\u088f", "\u{323B0}", "ａ", "\u{1CE41}",
];

describe("countO200k", () => {
  it("counts what tiktoken counts on the project's documents, line by line and whole", () => {
    const files = ["README.md", ...readdirSync("docs").filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`), "src/answer/cite-sources.ts"];
    const texts = files.flatMap((file) => {
      const text = readFileSync(file, "utf8");
      return [text, ...text.split("\n")];
    });
    const mismatches = texts.filter((text) => ours(text) !== reference(text));
    expect(mismatches).toEqual([]);
    expect(texts.length).toBeGreaterThan(500);
  });

  it.each([
    ["", 0],
    ["hello world", 2],
    ["<|endoftext|>", reference("<|endoftext|>")],
    ["don't I'LL we've THEY'RE", reference("don't I'LL we've THEY'RE")],
    ["😀 👩‍👩‍👧 日本語のテキスト café\u0301", reference("😀 👩‍👩‍👧 日本語のテキスト café\u0301")],
    ["lone \uD800 surrogate", reference("lone \uD800 surrogate")],
    ["  \n\n  x\t\ty  ", reference("  \n\n  x\t\ty  ")],
    ["1234567 ..// ./\n\r\n", reference("1234567 ..// ./\n\r\n")],
    ["a".repeat(300), reference("a".repeat(300))],
    // A CJK Extension J ideograph (Unicode 17.0), a legacy-computing symbol (16.0), a fullwidth "a":
    // to Unicode 17.0 the first is a word of its own; to tiktoken's 16.0 it is punctuation.
    ["\u{323B0}\u{1CE41}ａ", 10],
    // Rust folds case in (?i:'s) as Unicode does, so "'ſ" (long s) is a contraction there.
    ["don'ſ'stx", 6],
  ])("counts %j as %i", (text, expected) => {
    expect(ours(text)).toBe(expected);
  });

  // tiktoken splits text with Rust's regex, where \s is Unicode's White_Space: a byte order mark
  // (U+FEFF) is punctuation there and whitespace to JavaScript's \s, and U+0085 the other way round.
  // gpt-tokenizer keeps JavaScript's \s, so a lone byte order mark (token 5574) counts 2 there and
  // 1 in tiktoken. Found by the property below when gpt-tokenizer was its oracle.
  it("splits on Unicode's White_Space as tiktoken does, not on JavaScript's \\s", () => {
    const plain = { disallowedSpecial: new Set<string>() };
    for (const text of ["\uFEFF", "\uFEFF\uFEFF\u0000", "a\uFEFF b", "x\u0085y", " \u0085\n"]) {
      expect(ours(text)).toBe(reference(text));
    }
    expect(ours("\uFEFF")).toBe(1);
    expect(countTokens("\uFEFF", plain)).toBe(2);
  });

  // Rust's regex classes characters by the Unicode version of its tables (16.0 in tiktoken), where
  // JavaScript's \p{...} follows the runtime's ICU (17.0 in Node 22.23 and 24.22), so ours are pinned
  // (src/tokens/unicode-classes.ts). After a character, "'s" joins its piece only when it is a
  // letter or mark, and "123" (in part) only when it is a number: either way the count tells.
  // Characters unassigned to this runtime and none of these to Unicode 16.0 cannot differ.
  it("classes every character as tiktoken's Unicode 16.0 does, whatever the runtime's Unicode", () => {
    const pinned = new RegExp(`[${UNICODE_16.whiteSpace}${UNICODE_16.letterOrNumber}${UNICODE_16.mark}]`, "u");
    const unassigned = /[\p{Cn}\p{Co}\p{Cs}]/u;
    const mismatches: string[] = [];
    let checked = 0;
    for (let code = 0; code <= 0x10ffff; code += 1) {
      const char = String.fromCodePoint(code);
      if (unassigned.test(char) && !pinned.test(char)) continue;
      checked += 1;
      for (const text of [`${char}'s`, `${char}123`]) {
        if (ours(text) !== reference(text)) mismatches.push(`U+${code.toString(16).toUpperCase()} in ${JSON.stringify(text)}`);
      }
    }
    expect(mismatches.slice(0, 20)).toEqual([]);
    expect(checked).toBeGreaterThan(150_000);
  });

  it("agrees with tiktoken on random text of the characters that decide piece boundaries", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...TRICKY), { maxLength: 16 }), (chars) => {
        const text = chars.join("");
        expect(ours(text)).toBe(reference(text));
      }),
      { numRuns: 5000 },
    );
  });

  it("agrees with tiktoken on long words, which are merged with a heap instead of a scan", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("a", "b", "e", "r", "t", "x", "q", "é", "日"), { minLength: 120, maxLength: 600 }),
        (chars) => {
          const word = chars.join("");
          expect(ours(word)).toBe(reference(word));
        },
      ),
      { numRuns: 200 },
    );
    for (const word of ["a".repeat(4000), "xq".repeat(1500), "ab".repeat(700) + "c"]) expect(ours(word)).toBe(reference(word));
  });

  it("agrees with tiktoken on random Unicode text, byte order marks and all", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme", maxLength: 40 }),
        fc.string({ unit: "binary", maxLength: 20 }),
        fc.constantFrom("", "\uFEFF", "\uFEFF\uFEFF"),
        (a, b, mark) => {
          expect(ours(a + mark + b)).toBe(reference(a + mark + b));
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe("pieceBoundaryNear", () => {
  it("cuts where the two sides count to the whole", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...TRICKY, " ", "word", " x"), { maxLength: 60 }), fc.nat(), (parts, seed) => {
        const text = parts.join("");
        const cut = pieceBoundaryNear(text, seed % (text.length + 1), 8);
        expect(cut).toBeGreaterThanOrEqual(0);
        expect(cut).toBeLessThanOrEqual(text.length);
        expect(ours(text.slice(0, cut)) + ours(text.slice(cut))).toBe(ours(text));
      }),
      { numRuns: 3000 },
    );
  });

  it("prefers a place at or before the index, else after it, else the end", () => {
    expect(pieceBoundaryNear("one two three", 9)).toBe(7);
    expect(pieceBoundaryNear("onetwothree four", 2)).toBe(11);
    expect(pieceBoundaryNear("no-spaces-at-all", 5)).toBe(16);
  });
});
