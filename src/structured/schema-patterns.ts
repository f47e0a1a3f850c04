import { compileLinearPattern, estimatePattern, type LinearPattern, MAX_PATTERN_PROGRAM, type PatternProblem } from "./linear-pattern.js";

/**
 * Most instructions the patterns of one schema may compile into, all together (each distinct
 * pattern once, with its fixed cost): about 4 ms of compiling on the benchmark machine, the
 * most one schema may block the event loop for (docs/structured-answers.md#the-schema-is-untrusted).
 */
export const MAX_SCHEMA_PROGRAM = 6000;

/** Most characters the distinct patterns of one schema may have, all together. */
export const MAX_SCHEMA_PATTERN_CHARACTERS = 10_000;

/** What one compiled instruction keeps on the heap, about (measured with `--expose-gc`: 150 bytes). */
const BYTES_PER_INSTRUCTION = 160;

/**
 * The patterns (`pattern`, `patternProperties` keys) of one caller's schema, each distinct one
 * compiled once for the linear-time engine and shared by the schema's check, the validator's
 * guard and every answer's validation (docs/structured-answers.md#the-schema-is-untrusted). The
 * schema's budget is spent before compiling: a pattern that would take it past
 * `MAX_SCHEMA_PROGRAM` instructions or `MAX_SCHEMA_PATTERN_CHARACTERS` characters is refused
 * uncompiled.
 */
export class SchemaPatterns {
  private readonly compiled = new Map<string, LinearPattern>();
  private instructions = 0;
  private characters = 0;

  /** The pattern compiled, or why it is refused (for a 400). A pattern seen before is not compiled again. */
  compile(pattern: string): LinearPattern | PatternProblem {
    const known = this.compiled.get(pattern);
    if (known) return known;
    const estimate = estimatePattern(pattern);
    if (typeof estimate !== "number") return estimate;
    if (this.characters + pattern.length > MAX_SCHEMA_PATTERN_CHARACTERS) {
      return { problem: `takes the schema's distinct patterns past ${MAX_SCHEMA_PATTERN_CHARACTERS} characters` };
    }
    if (estimate <= MAX_PATTERN_PROGRAM && this.instructions + estimate > MAX_SCHEMA_PROGRAM) {
      return { problem: `takes the schema's patterns past ${MAX_SCHEMA_PROGRAM} compiled instructions (this one about ${estimate}): counted repetitions such as {1,1000} add up` };
    }
    const result = compileLinearPattern(pattern, estimate);
    if ("problem" in result) return result;
    this.compiled.set(pattern, result);
    this.instructions += estimate;
    this.characters += pattern.length;
    return result;
  }

  /** A pattern compiled by `compile`; the schema's check compiled every one before the schema is used. */
  get(pattern: string): LinearPattern | undefined {
    return this.compiled.get(pattern);
  }

  /** How many distinct patterns were compiled. */
  get count(): number {
    return this.compiled.size;
  }

  /** What the compiled programs keep on the heap, about (for the schema cache's byte bound). */
  get bytes(): number {
    return this.instructions * BYTES_PER_INSTRUCTION;
  }
}
