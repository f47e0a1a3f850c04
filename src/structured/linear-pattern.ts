import { RE2JS } from "re2js";

/** Longest `pattern` accepted from a caller's schema, in characters. */
export const MAX_PATTERN_LENGTH = 1000;

/** A caller's `pattern`, compiled for a linear-time engine: `test` is JSON Schema's unanchored search. */
export interface LinearPattern {
  test(text: string): boolean;
}

/** Whether an escape in the pattern names a group by backreference (`\k<name>`, `\1`…`\9`). */
function hasBackreference(pattern: string): boolean {
  let inClass = false;
  for (let index = 0; index < pattern.length; index += 1) {
    const char = pattern[index];
    if (char === "\\") {
      const next = pattern[index + 1] ?? "";
      if (!inClass && (next === "k" || (next >= "1" && next <= "9"))) return true;
      index += 1;
    } else if (char === "[") inClass = true;
    else if (char === "]") inClass = false;
  }
  return false;
}

/**
 * Compiles a `pattern` (or a `patternProperties` key) of a caller's schema for RE2's linear-time
 * engine (`re2js`, docs/structured-answers.md#the-schema-is-untrusted), so that no pattern and no
 * answer can make matching take more than time proportional to the text. A pattern that is not a
 * valid ECMA-262 expression, is longer than `MAX_PATTERN_LENGTH`, or needs backtracking
 * (backreferences, lookahead, lookbehind) cannot be evaluated that way: the problem is returned,
 * for a 400.
 */
export function compileLinearPattern(pattern: string): LinearPattern | { problem: string } {
  if (pattern.length > MAX_PATTERN_LENGTH) return { problem: `is longer than ${MAX_PATTERN_LENGTH} characters` };
  try {
    // Parsing only (nothing is matched): is it the ECMA-262 expression JSON Schema says a pattern is?
    new RegExp(pattern, "u");
  } catch {
    return { problem: "is not a valid regular expression (ECMA-262, with the u flag)" };
  }
  if (hasBackreference(pattern)) return { problem: "uses a backreference, which cannot be matched in linear time" };
  try {
    const compiled = RE2JS.compile(RE2JS.translateRegExp(pattern));
    return { test: (text) => compiled.matcher(text).find() };
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^error parsing regexp: /, "") : "unsupported";
    return { problem: `cannot be matched in linear time (${reason}); lookahead, lookbehind and backreferences are not supported` };
  }
}
