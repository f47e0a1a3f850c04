import type { ValidationIssue } from "../errors/adapter-error.js";

/** Keys that would reach an object's prototype when merged naively; refused anywhere in a body. */
const FORBIDDEN_KEYS = new Set(["__proto__", "constructor", "prototype"]);
const MAX_REPORTED = 10;

/**
 * Checks a parsed JSON body for what schemas do not catch but would hurt later: nesting deeper
 * than `maxDepth` (a recursive serializer would overflow its stack), prototype keys, and strings
 * with NUL bytes or lone surrogates (not text; many upstream stores reject them). Iterative, so
 * a hostile body cannot overflow the checker itself.
 */
export function inspectJson(body: unknown, maxDepth: number): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const stack: { value: unknown; path: (string | number)[] }[] = [{ value: body, path: [] }];
  while (stack.length > 0 && issues.length < MAX_REPORTED) {
    const { value, path } = stack.pop() as { value: unknown; path: (string | number)[] };
    if (typeof value === "string") {
      if (value.includes("\u0000")) {
        issues.push({ loc: ["body", ...path], msg: "String should not contain NUL characters", type: "string_nul" });
      } else if (hasLoneSurrogate(value)) {
        issues.push({ loc: ["body", ...path], msg: "String should be valid Unicode (it has a lone surrogate)", type: "string_unicode" });
      }
      continue;
    }
    if (typeof value !== "object" || value === null) continue;
    if (path.length >= maxDepth) {
      issues.push({ loc: ["body", ...path], msg: `JSON should be nested at most ${maxDepth} levels deep`, type: "too_deep" });
      continue;
    }
    if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index -= 1) stack.push({ value: value[index], path: [...path, index] });
      continue;
    }
    for (const key of Object.keys(value)) {
      if (FORBIDDEN_KEYS.has(key)) {
        issues.push({ loc: ["body", ...path, key], msg: `The key '${key}' is not allowed`, type: "forbidden_key" });
        continue;
      }
      if (hasLoneSurrogate(key) || key.includes("\u0000")) {
        issues.push({ loc: ["body", ...path], msg: "Keys should be valid Unicode without NUL characters", type: "string_unicode" });
        continue;
      }
      stack.push({ value: (value as Record<string, unknown>)[key], path: [...path, key] });
    }
  }
  return issues;
}

function hasLoneSurrogate(text: string): boolean {
  return !text.isWellFormed();
}
