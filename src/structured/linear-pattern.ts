import { type AST, RegExpParser } from "@eslint-community/regexpp";
import { RE2JS } from "re2js";

/** Longest `pattern` accepted from a caller's schema, in characters. */
export const MAX_PATTERN_LENGTH = 1000;

/**
 * Most instructions one pattern's RE2 program may have. Compiling costs about 0.5–1 µs and 150
 * bytes per instruction (bench/structured.mjs): `^.{1,1000}$` is about 2,000; `x{1,1000}` repeated
 * to 999 characters would be 220,000 (a second of blocked event loop and 38 MB).
 */
export const MAX_PATTERN_PROGRAM = 3000;

/** What compiling one pattern costs before its program's own instructions (measured: about 12 µs, as much as 20 instructions). */
const FIXED_COST = 20;

/** A caller's `pattern`, compiled for a linear-time engine: `test` is JSON Schema's unanchored search. */
export interface LinearPattern {
  test(text: string): boolean;
  /** The instructions of its compiled program (`programSize`), what it costs to keep and to run. */
  size: number;
}

/** A pattern the adapter will not compile, and why (for a 400). */
export interface PatternProblem {
  problem: string;
}

/** Thrown from the estimate: a construct only a backtracking engine can match. */
class NotLinear extends Error {}

/** Instructions of the alternatives of a pattern or group: each alternative's, one branch instruction between them. */
function alternativesCost(alternatives: readonly AST.Alternative[]): number {
  let total = alternatives.length - 1;
  for (const alternative of alternatives) for (const element of alternative.elements) total += elementCost(element);
  return total;
}

/**
 * An upper bound of the instructions RE2 compiles an element into (checked against `programSize`
 * in test/unit/structured/linear-pattern.test.ts): a counted repetition `x{n,m}` is n copies of x
 * and m−n optional ones, so repetitions multiply when nested and add up along the pattern.
 */
function elementCost(element: AST.Element): number {
  switch (element.type) {
    case "Group":
      return alternativesCost(element.alternatives);
    case "CapturingGroup":
      return alternativesCost(element.alternatives) + 2;
    case "Quantifier": {
      const each = elementCost(element.element);
      const optional = element.max === Infinity ? each + 1 : (element.max - element.min) * (each + 1);
      return element.min * each + optional;
    }
    case "Assertion":
      if (element.kind === "lookahead" || element.kind === "lookbehind") throw new NotLinear("lookahead and lookbehind");
      return 1;
    case "Backreference":
      throw new NotLinear("a backreference");
    default:
      return 1;
  }
}

/**
 * What compiling a pattern would cost, in instructions, estimated from its syntax before anything
 * is compiled (`FIXED_COST` included); or why it cannot be compiled for the linear-time engine.
 */
export function estimatePattern(pattern: string): number | PatternProblem {
  if (pattern.length > MAX_PATTERN_LENGTH) return { problem: `is longer than ${MAX_PATTERN_LENGTH} characters` };
  let parsed: AST.Pattern;
  try {
    // Parsing only (nothing is matched): is it the ECMA-262 expression JSON Schema says a pattern is?
    parsed = new RegExpParser().parsePattern(pattern, 0, pattern.length, { unicode: true });
  } catch {
    return { problem: "is not a valid regular expression (ECMA-262, with the u flag)" };
  }
  try {
    return alternativesCost(parsed.alternatives) + FIXED_COST;
  } catch (error) {
    if (!(error instanceof NotLinear)) throw error;
    if (error.message === "a backreference") return { problem: "uses a backreference, which cannot be matched in linear time" };
    return { problem: "cannot be matched in linear time; lookahead, lookbehind and backreferences are not supported" };
  }
}

/**
 * Compiles a `pattern` (or a `patternProperties` key) of a caller's schema for RE2's linear-time
 * engine (`re2js`, docs/structured-answers.md#the-schema-is-untrusted), so that no pattern and no
 * answer can make matching take more than time proportional to the text. The program's size is
 * bounded before compiling (`estimatePattern`, at most `MAX_PATTERN_PROGRAM`): the text's length
 * says nothing of it, and compiling is what costs. A pattern that is not a valid ECMA-262
 * expression, is too long or too large, or needs backtracking (backreferences, lookahead,
 * lookbehind) is returned as a problem, for a 400.
 */
export function compileLinearPattern(pattern: string, estimate = estimatePattern(pattern)): LinearPattern | PatternProblem {
  if (typeof estimate !== "number") return estimate;
  if (estimate > MAX_PATTERN_PROGRAM) return tooLarge(estimate);
  try {
    const compiled = RE2JS.compile(RE2JS.translateRegExp(pattern));
    const size = compiled.programSize();
    if (size > MAX_PATTERN_PROGRAM) return tooLarge(size);
    return { test: (text) => compiled.matcher(text).find(), size };
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^error parsing regexp: /, "") : "unsupported";
    return { problem: `cannot be matched in linear time (${reason}); lookahead, lookbehind and backreferences are not supported` };
  }
}

function tooLarge(instructions: number): PatternProblem {
  return {
    problem: `compiles into too large a program (about ${instructions} instructions, at most ${MAX_PATTERN_PROGRAM}): counted repetitions such as {1,1000} multiply when nested and add up along the pattern`,
  };
}
