/** One entry of a key list (docs/governance.md#named-keys): a key, and the name it goes by when it has one. */
export interface KeyEntry {
  /** What limits, usage, metrics and the audit trail call the key (`team-search`); undefined for a key listed bare. */
  name: string | undefined;
  key: string;
}

/** A key's name: a letter or digit, then letters, digits, `.`, `_` or `-`; at most 64 characters. */
export const KEY_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** What a key may be made of: what a bearer credential may carry, less the separators of a list. */
const KEY = /^[\x21-\x2b\x2d-\x7e]+$/;
/** An entry whose only `=` are at its end (Base64 padding): a bare key. */
const BARE = /^[^=]+=*$/;
/** The prefixes of common API keys (OpenAI, Anthropic and LiteLLM `sk-`, GitHub, GitLab, Slack, AWS, Google): no name starts so. */
const KEY_PREFIX = /^(?:sk[-_]|pk[-_]|rk[-_]|gh[opsur]_|github_pat_|glpat-|xox[abpr]-|AKIA|AIza)/i;
/** Twenty letters and digits in a row, both among them: random text, as keys are, not a name as people write one. */
const RANDOM_RUN = /(?=[A-Za-z0-9]*[A-Za-z])(?=[A-Za-z0-9]*[0-9])[A-Za-z0-9]{20,}/;

/** The problem of a key made of what a bearer credential cannot carry in a list. */
const NOT_A_KEY = "a key is printable ASCII without spaces or commas";

/** A key list read: its entries, and what is wrong with it (each problem names an entry by its place, never by its name or key). */
export interface ParsedKeyList {
  entries: KeyEntry[];
  problems: string[];
}

/**
 * Reads a key list (`ADAPTER_API_KEYS`, `GATEWAY_API_KEYS`, `ADMIN_API_KEYS`, or the lines of
 * `ADAPTER_API_KEYS_FILE`; docs/governance.md#named-keys): entries separated by commas or line
 * breaks, each `name=key` or a bare key; in a file, a line starting with `#` is a comment. An
 * entry whose only `=` are at its end is a bare key (Base64 padding: `c2stYWI==`); any other is
 * `name=key`, split at its first `=` (so a key with `=` before its end needs a name). What could be
 * a key misread as a name is refused, not read: a "name" that looks like a key (a key prefix such
 * as `sk-`, or twenty letters and digits in a row), an entry starting with `=`, a key after the
 * name starting with `=` (`a==b`). A key listed twice is a problem (a name may be given to several
 * keys: a key being rotated). Problems name an entry by its place only: what failed to parse may
 * be key material.
 */
export function parseKeyList(text: string): ParsedKeyList {
  const entries: KeyEntry[] = [];
  const problems: string[] = [];
  const seen = new Map<string, number>();
  const items = text
    .split(/\r?\n/)
    .filter((line) => !line.trim().startsWith("#"))
    .flatMap((line) => line.split(","))
    .map((item) => item.trim())
    .filter(Boolean);
  items.forEach((item, index) => {
    const place = `entry ${index + 1}`;
    const read = entryOf(item);
    if (typeof read === "string") {
      problems.push(`${place}: ${read}`);
      return;
    }
    const earlier = seen.get(read.key);
    if (earlier !== undefined) {
      problems.push(`${place} repeats the key of entry ${earlier + 1}`);
      return;
    }
    seen.set(read.key, index);
    entries.push(read);
  });
  return { entries, problems };
}

/** `name=key`, or a bare key (which may end in Base64 padding); or what is wrong with the entry, quoting none of it. */
function entryOf(item: string): KeyEntry | string {
  if (BARE.test(item)) return KEY.test(item) ? { name: undefined, key: item } : NOT_A_KEY;
  const equals = item.indexOf("=");
  const name = item.slice(0, equals).trim();
  const key = item.slice(equals + 1).trim();
  if (name === "") return "starts with '=': a bare key holds '=' only at its end, and a name goes before the first '=' (name=key)";
  if (!KEY_NAME.test(name)) return "the name before '=' must be letters, digits, '.', '_' or '-' (at most 64, starting with a letter or digit)";
  if (KEY_PREFIX.test(name) || RANDOM_RUN.test(name)) {
    return "what comes before '=' looks like a key, not a name (it starts like one, or has twenty letters and digits in a row): a key with '=' before its end is listed with a name, name=key";
  }
  if (key.startsWith("=")) return "'==' inside: a bare key holds '=' only at its end; a key with '=' before its end is listed with a name, name=key";
  if (!KEY.test(key)) return NOT_A_KEY;
  return { name, key };
}
