import { DOCUMENT_EXTENSIONS } from "../../answer/cite-sources.js";

// Content replaced by placeholders of the same shape (docs/check.md#what-a-recording-keeps), so
// that a recording without `--record-content` still drives the adapter the way the service did:
// lengths, white space, punctuation, digits and Markdown stay; letters become `x` (`X` for a
// capital); the words the adapter's parsers look for (a `Sources:` heading, `p.`, a document's
// extension) are kept; and each document's name gets a placeholder of its own, the same
// everywhere in the recording, so markers still point at the sources they named.

/** Words the adapter's parsers read (references headings, page markers): kept as they are. */
const KEPT_WORDS = new Set(["sources", "source", "references", "reference", "citations", "bibliography", "works", "cited", "p", "pp", "page", "pages", "pg"]);

/**
 * Keys whose string values are the interface's structure, not content: ids, statuses, cursors,
 * the realtime channel's name and epoch, error locations and messages, the chat completion's
 * constants. Everything else that is a string is content.
 */
const STRUCTURAL_KEYS = new Set([
  "id",
  "status",
  "object",
  "model",
  "role",
  "finish_reason",
  "type",
  "next_cursor",
  "cursor",
  "run_id",
  "channel",
  "epoch",
  "loc",
  "msg",
  "detail",
  "client",
  "version",
  "code",
  "reason",
  "message",
  // Replaced by labels and a shown URL before content is redacted (redact-secrets.ts `withoutTokens`).
  "token",
  "subscription_token",
  "ws_url",
]);

/** Keys of a tool step's object that name the tool (docs/upstream-assumptions.md#steps): kept, as a tool's name is the service's, not content. */
const TOOL_NAME_KEYS = new Set(["name", "tool_name", "type", "id"]);

const WORD = /[\p{L}\p{M}\p{N}]+/gu;
const LETTER = /\p{L}/u;

/**
 * Replaces content with placeholders of the same shape, consistently over one recording (one
 * instance per recording: its document-name placeholders are its state).
 */
export class ContentRedactor {
  /** Lower-cased document name stem → its placeholder. */
  private readonly stems = new Map<string, string>();
  private readonly taken = new Set<string>();

  /** `modeField`: the create body's mode field, whose value (`ask`) is structure. */
  constructor(private readonly modeField: string) {}

  /** A text with its content replaced (see the module comment). */
  text(value: string): string {
    return value.replace(WORD, (word, offset: number, whole: string) => {
      const lower = word.toLowerCase();
      if (KEPT_WORDS.has(lower)) return word;
      const before = whole[offset - 1];
      if (before === "." && DOCUMENT_EXTENSIONS.has(lower) && offset >= 2 && /[\p{L}\p{N}_)-]/u.test(whole[offset - 2] ?? "")) return word;
      const after = /^\.([A-Za-z][A-Za-z0-9]{0,7})(?![\p{L}\p{N}])/u.exec(whole.slice(offset + word.length))?.[1];
      if (after && DOCUMENT_EXTENSIONS.has(after.toLowerCase())) return this.stem(word);
      return lettersAsX(word);
    });
  }

  /** Every string of a JSON value redacted, but for the structural keys' (keys themselves are kept). */
  json(value: unknown, key?: string): unknown {
    if (typeof value === "string") return key !== undefined && (STRUCTURAL_KEYS.has(key) || key === this.modeField) ? value : this.text(value);
    if (Array.isArray(value)) return value.map((item) => this.json(item, key));
    if (typeof value !== "object" || value === null) return value;
    return Object.fromEntries(
      Object.entries(value).map(([name, item]) => {
        if (name === "tool" && typeof item === "string") return [name, item];
        if (name === "tool" && typeof item === "object" && item !== null && !Array.isArray(item)) {
          return [name, Object.fromEntries(Object.entries(item).map(([inner, part]) => [inner, TOOL_NAME_KEYS.has(inner) && typeof part === "string" ? part : this.json(part, inner)]))];
        }
        return [name, this.json(item, name)];
      }),
    );
  }

  /** A document name's stem: the same placeholder wherever it appears (case aside), a different one for each stem. */
  private stem(word: string): string {
    const lower = word.toLowerCase();
    let placeholder = this.stems.get(lower);
    if (placeholder === undefined) {
      const letters = [...lower].filter((character) => LETTER.test(character)).length;
      let candidate = "";
      // Bounded: a stem too short to be told apart from all the others shares a placeholder.
      for (let number = this.stems.size + 1, tries = 0; tries < 1000; number += 1, tries += 1) {
        candidate = base26(number, letters);
        if (!this.taken.has(`${letters}:${candidate}`)) break;
      }
      this.taken.add(`${letters}:${candidate}`);
      let index = 0;
      placeholder = [...lower].map((character) => (LETTER.test(character) ? (candidate[index++] ?? "x") : character)).join("");
      this.stems.set(lower, placeholder);
    }
    // The occurrence's capitals, on the placeholder's letters.
    const shown = [...word];
    return [...placeholder].map((character, index) => (shown[index] !== shown[index]?.toLowerCase() ? character.toUpperCase() : character)).join("");
  }
}

/** The shape of a text as matching needs it: every letter `x`, digits and the rest kept (a replay compares questions by it). */
export function contentShape(value: string): string {
  return value.replace(/\p{L}/gu, "x");
}

function lettersAsX(word: string): string {
  return word.replace(/\p{L}/gu, (letter) => (letter !== letter.toLowerCase() ? "X" : "x"));
}

/** `number` in letters a–z, `length` long, padded with `x` on the left (cut on the left when too long). */
function base26(number: number, length: number): string {
  let text = "";
  for (let rest = number; rest > 0; rest = Math.floor(rest / 26)) text = String.fromCharCode(97 + (rest % 26)) + text;
  return text.padStart(length, "x").slice(-length);
}
