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
  // Each value knows its parent and its key: the path is built only for a value with an issue
  // (the hot path inspects every request, and a path copied per value was most of its garbage).
  const stack: Visit[] = [{ value: body, key: undefined, parent: undefined, depth: 0 }];
  while (stack.length > 0 && issues.length < MAX_REPORTED) {
    const visit = stack.pop() as Visit;
    const { value, depth } = visit;
    if (typeof value === "string") {
      if (value.includes("\u0000")) {
        issues.push({ loc: ["body", ...pathOf(visit)], msg: "String should not contain NUL characters", type: "string_nul" });
      } else if (hasLoneSurrogate(value)) {
        issues.push({ loc: ["body", ...pathOf(visit)], msg: "String should be valid Unicode (it has a lone surrogate)", type: "string_unicode" });
      }
      continue;
    }
    if (typeof value !== "object" || value === null) continue;
    if (depth >= maxDepth) {
      issues.push({ loc: ["body", ...pathOf(visit)], msg: `JSON should be nested at most ${maxDepth} levels deep`, type: "too_deep" });
      continue;
    }
    if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index -= 1) {
        stack.push({ value: value[index], key: index, parent: visit, depth: depth + 1 });
      }
      continue;
    }
    for (const key of Object.keys(value)) {
      if (FORBIDDEN_KEYS.has(key)) {
        issues.push({ loc: ["body", ...pathOf(visit), key], msg: `The key '${key}' is not allowed`, type: "forbidden_key" });
        continue;
      }
      if (hasLoneSurrogate(key) || key.includes("\u0000")) {
        issues.push({ loc: ["body", ...pathOf(visit)], msg: "Keys should be valid Unicode without NUL characters", type: "string_unicode" });
        continue;
      }
      stack.push({ value: (value as Record<string, unknown>)[key], key, parent: visit, depth: depth + 1 });
    }
  }
  return issues;
}

/** A value to inspect, where it sits in the body. */
interface Visit {
  value: unknown;
  key: string | number | undefined;
  parent: Visit | undefined;
  depth: number;
}

/** The keys from the body's root down to a value. */
function pathOf(visit: Visit): (string | number)[] {
  const path: (string | number)[] = [];
  for (let at: Visit | undefined = visit; at?.key !== undefined; at = at.parent) path.push(at.key);
  return path.reverse();
}

function hasLoneSurrogate(text: string): boolean {
  return !text.isWellFormed();
}
