const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * Converts UTF-16 offsets (what JavaScript strings index by) to Unicode code point offsets
 * (what the adapter reports in `start_index`/`end_index`, as Python-style offsets are), so an
 * emoji or a CJK extension character before a marker does not shift the span.
 */
export function codePointOffsets(text: string, utf16Offsets: readonly number[]): number[] {
  // Without surrogates before the last offset, every code unit there is a code point: the common
  // case costs one scan of that part (none when there are no offsets).
  let last = 0;
  for (const offset of utf16Offsets) if (offset > last) last = offset;
  if (!SURROGATE.test(last < text.length ? text.slice(0, last) : text)) return [...utf16Offsets];
  const order = utf16Offsets.map((offset, index) => ({ offset, index })).sort((a, b) => a.offset - b.offset);
  const result = new Array<number>(utf16Offsets.length);
  let unit = 0;
  let points = 0;
  for (const { offset, index } of order) {
    while (unit < offset && unit < text.length) {
      const code = text.charCodeAt(unit);
      const isHighSurrogate = code >= 0xd800 && code <= 0xdbff;
      const next = text.charCodeAt(unit + 1);
      unit += isHighSurrogate && next >= 0xdc00 && next <= 0xdfff ? 2 : 1;
      points += 1;
    }
    result[index] = points;
  }
  return result;
}

/** Number of code points in a string (what `len()` gives in Python). */
export function codePointLength(text: string): number {
  return codePointOffsets(text, [text.length])[0] ?? 0;
}
