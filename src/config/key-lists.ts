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

/** A key list read: its entries, and what is wrong with it (each problem names an entry by its place, never by its key). */
export interface ParsedKeyList {
  entries: KeyEntry[];
  problems: string[];
}

/**
 * Reads a key list (`ADAPTER_API_KEYS`, `GATEWAY_API_KEYS`, `ADMIN_API_KEYS`, or the lines of
 * `ADAPTER_API_KEYS_FILE`): entries separated by commas or line breaks, each `name=key` or a bare
 * key; in a file, a line starting with `#` is a comment. The split is at the first `=`; when what
 * follows it is empty or starts with `=`, the entry is a bare key with Base64 padding (`abc==`),
 * so only a key with `=` inside it needs a name. A key listed twice is a problem (a name may be
 * given to several keys: a key being rotated). Problems never quote a key.
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
    const entry = entryOf(item);
    if (entry.name !== undefined && !KEY_NAME.test(entry.name)) {
      problems.push(`${place}: the name before '=' must be letters, digits, '.', '_' or '-' (at most 64, starting with a letter or digit)`);
      return;
    }
    if (!KEY.test(entry.key)) {
      problems.push(`${place}${entry.name ? ` ('${entry.name}')` : ""}: a key is printable ASCII without spaces or commas`);
      return;
    }
    const earlier = seen.get(entry.key);
    if (earlier !== undefined) {
      problems.push(`${place}${entry.name ? ` ('${entry.name}')` : ""} repeats the key of entry ${earlier + 1}`);
      return;
    }
    seen.set(entry.key, index);
    entries.push(entry);
  });
  return { entries, problems };
}

/** `name=key`, or a bare key (which may end in Base64 padding). */
function entryOf(item: string): KeyEntry {
  const equals = item.indexOf("=");
  const rest = equals < 0 ? "" : item.slice(equals + 1).trim();
  if (equals <= 0 || rest === "" || rest.startsWith("=")) return { name: undefined, key: item };
  return { name: item.slice(0, equals).trim(), key: rest };
}
