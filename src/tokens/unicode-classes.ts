import { createRequire } from "node:module";

/**
 * Which characters are letters, marks, numbers and White_Space to the o200k pattern, as Unicode
 * 16.0 says: tiktoken runs the pattern with Rust's regex, whose tables are Unicode 16.0's, so a
 * character assigned since (Unicode 17.0's CJK Extension J, Sidetic, Tai Yo...) is none of these
 * there. JavaScript's \p{...} follows the runtime's ICU instead (Unicode 17.0 in Node 22.23 and
 * 24.22; it moves with Node's minor releases), which split such text differently and counted other
 * totals than tiktoken. The tables come from regenerate-unicode-properties, pinned at 10.2.0 (Unicode
 * 16.0); the tests hold them to tiktoken on every assigned character
 * (test/unit/tokens/count-o200k.test.ts).
 *
 * Each class is the inside of a bracketed class for a regular expression with the `u` flag
 * (`[^\r\n${letterOrNumber}]`), its characters written as themselves rather than escaped: V8 leaves
 * a pattern longer than 20 K characters unoptimized, and such a pattern split non-Latin text 4.5
 * times slower (the escaped classes made the pattern 93 K characters long).
 */
export interface UnicodeClasses {
  /** [\p{L}\p{N}] */
  readonly letterOrNumber: string;
  /** \p{N} */
  readonly number: string;
  /** \p{White_Space}: Rust's \s. */
  readonly whiteSpace: string;
  /** [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]: what a word's capitals may be. */
  readonly upperOrCaseless: string;
  /** [\p{Ll}\p{Lm}\p{Lo}\p{M}]: what the rest of a word may be. */
  readonly lowerOrCaseless: string;
  /** \p{M} */
  readonly mark: string;
}

/** A regenerate set, as regenerate-unicode-properties exports it. */
interface CodePointSet {
  clone(): CodePointSet;
  add(other: CodePointSet): CodePointSet;
  toArray(): number[];
}

/** The classes, read once per thread that counts (about 25 ms, at start-up; the counter took 10 ms before). */
export const UNICODE_16: UnicodeClasses = readUnicode16Classes();

function readUnicode16Classes(): UnicodeClasses {
  const require = createRequire(import.meta.url);
  const version = require("regenerate-unicode-properties/unicode-version.js") as string;
  if (version !== "16.0.0") throw new Error(`regenerate-unicode-properties has Unicode ${version}; the o200k pattern needs 16.0.0's`);
  const property = (name: string) =>
    (require(`regenerate-unicode-properties/${name}.js`) as { characters: CodePointSet }).characters;
  const categories = (...names: string[]) =>
    classBody(names.map((name) => property(`General_Category/${name}`)).reduce((all, one) => all.clone().add(one)));
  return Object.freeze({
    letterOrNumber: categories("Letter", "Number"),
    number: categories("Number"),
    whiteSpace: classBody(property("Binary_Property/White_Space")),
    upperOrCaseless: categories("Uppercase_Letter", "Titlecase_Letter", "Modifier_Letter", "Other_Letter", "Mark"),
    lowerOrCaseless: categories("Lowercase_Letter", "Modifier_Letter", "Other_Letter", "Mark"),
    mark: categories("Mark"),
  });
}

/** The set's ranges, `a-b`, each character as itself but for controls and the class's syntax. */
function classBody(characters: CodePointSet): string {
  let body = "";
  let first = -1;
  let last = -2;
  const close = () => {
    if (first < 0) return;
    body += last === first ? written(first) : `${written(first)}${last > first + 1 ? "-" : ""}${written(last)}`;
  };
  for (const code of characters.toArray()) {
    if (code !== last + 1) {
      close();
      first = code;
    }
    last = code;
  }
  close();
  return body;
}

/** One character of a class: as itself, or escaped when it is a control or the class's syntax. */
function written(code: number): string {
  const escaped = code < 0x20 || code === 0x2d || (code >= 0x5b && code <= 0x5e) || (code >= 0xd800 && code <= 0xdfff);
  return escaped ? `\\u${code.toString(16).padStart(4, "0")}` : String.fromCodePoint(code);
}
