import { RE2JS } from "re2js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { compileLinearPattern, estimatePattern, MAX_PATTERN_PROGRAM } from "../../../src/structured/linear-pattern.js";
import { MAX_SCHEMA_PROGRAM, SchemaPatterns } from "../../../src/structured/schema-patterns.js";

// A pattern's cost is its compiled program, not its text (docs/structured-answers.md#the-schema-is-untrusted):
// `x{1,1000}` repeated to 999 characters is a valid pattern of 220,000 instructions.
const HOSTILE = "x{1,1000}".repeat(111).slice(0, 999);

afterEach(() => {
  vi.restoreAllMocks();
});

describe("estimatePattern", () => {
  it.each([
    "^[A-Z]{3}-\\d+$",
    "a+b",
    "^$",
    "x{1,1000}",
    "^.{1,1000}$",
    "(a{10}){100}",
    "((a{10}){10}){10}",
    "(x|y){1,500}",
    "x{1,100}".repeat(20),
    "^[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]{1,253}\\.[A-Za-z]{2,63}$",
    "\\p{L}{1,500}",
    "\\w\\s\\d\\b.{3}",
    "(?<year>\\d{4})-(?<month>\\d{2})",
    "\\u{1F600}+",
    "(a|b|c|d|e|f|g|h){100}",
    "(?:(?:a|b)?c){300}",
    "((((((((((a))))))))))",
    "[\\p{L}\\p{N}]{1,100}",
  ])("is at least the program re2js compiles %s into", (pattern) => {
    const estimate = estimatePattern(pattern);
    expect(typeof estimate).toBe("number");
    expect(estimate).toBeGreaterThanOrEqual(RE2JS.compile(RE2JS.translateRegExp(pattern)).programSize());
  });

  it("multiplies nested repetitions and adds repetitions along the pattern", () => {
    expect(estimatePattern(HOSTILE)).toBeGreaterThan(200_000);
    expect(estimatePattern("((a{10}){10}){10}")).toBeGreaterThan(1000);
  });

  it("names what only a backtracking engine can match", () => {
    expect(estimatePattern("^(a+)\\1$")).toEqual({ problem: expect.stringContaining("backreference") });
    expect(estimatePattern("^(?=a)a")).toEqual({ problem: expect.stringContaining("linear time") });
    expect(estimatePattern("(?<=x)y")).toEqual({ problem: expect.stringContaining("linear time") });
    expect(estimatePattern("(")).toEqual({ problem: expect.stringContaining("not a valid regular expression") });
  });
});

describe("compileLinearPattern", () => {
  it("refuses a short pattern of a huge program without compiling it", () => {
    const compile = vi.spyOn(RE2JS, "compile");
    expect(HOSTILE.length).toBeLessThan(1000);
    expect(compileLinearPattern(HOSTILE)).toEqual({ problem: expect.stringContaining(`at most ${MAX_PATTERN_PROGRAM}`) });
    expect(compile).not.toHaveBeenCalled();
  });

  it("compiles an ordinary pattern and says its program's size", () => {
    const compiled = compileLinearPattern("^[A-Z]{3}-\\d+$");
    expect(compiled).toMatchObject({ size: expect.any(Number) });
    if (!("test" in compiled)) throw new Error("not compiled");
    expect(compiled.test("ABC-12")).toBe(true);
    expect(compiled.test("abc-12")).toBe(false);
    expect(compileLinearPattern("^.{1,1000}$")).toMatchObject({ size: expect.any(Number) });
  });
});

describe("SchemaPatterns", () => {
  it("compiles each distinct pattern once", () => {
    const compile = vi.spyOn(RE2JS, "compile");
    const patterns = new SchemaPatterns();
    for (let round = 0; round < 3; round += 1) {
      expect(patterns.compile("^[A-Z]{3}$")).toHaveProperty("test");
      expect(patterns.compile("^\\d+$")).toHaveProperty("test");
    }
    expect(compile).toHaveBeenCalledTimes(2);
    expect(patterns.count).toBe(2);
    expect(patterns.get("^\\d+$")).toBeDefined();
  });

  it("refuses, uncompiled, the pattern that takes a schema past its program budget", () => {
    const patterns = new SchemaPatterns();
    let refused: unknown = null;
    let index = 0;
    for (; index < 10 && refused === null; index += 1) {
      // Each distinct and within the one-pattern bound (about 2,000 instructions).
      const result = patterns.compile(`^${"a".repeat(index)}.{1,1000}$`);
      if ("problem" in result) refused = result;
    }
    expect(refused).toEqual({ problem: expect.stringContaining(`past ${MAX_SCHEMA_PROGRAM} compiled instructions`) });
    expect(patterns.count).toBe(index - 1);
    expect(patterns.count).toBeLessThanOrEqual(MAX_SCHEMA_PROGRAM / 2000);
  });

  it("refuses patterns past the schema's characters", () => {
    const patterns = new SchemaPatterns();
    let problem: string | undefined;
    for (let index = 0; index < 20 && problem === undefined; index += 1) {
      const result = patterns.compile(`^${String(index).padStart(4, "0")}${"[a-z]".repeat(199)}`);
      if ("problem" in result) problem = result.problem;
    }
    expect(problem).toContain("characters");
  });
});
