import { Worker } from "node:worker_threads";
import { format as validatorFormats } from "@cfworker/json-schema";
import { RE2JS } from "re2js";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { SchemaValidation } from "../../../src/structured/schema-validator.js";
import { BUILD_TIMEOUT_MS, compiled } from "../../helpers/compiled.js";

const limits = { maxBytes: 65_536, maxDepth: 24 };

const contracts = z.toJSONSchema(
  z.object({
    items: z.array(z.object({ name: z.string(), renews: z.iso.date(), code: z.string().regex(/^[A-Z]{3}-\d+$/), kind: z.enum(["lease", "service"]) })),
    total: z.number().int(),
  }),
) as Record<string, unknown>;

describe("SchemaValidation of answers", () => {
  const validation = new SchemaValidation(limits);

  it("accepts a schema zod writes, and an answer that matches it", () => {
    expect(validation.check(contracts)).toBeNull();
    const answer = { items: [{ name: "Office lease [1]", renews: "2027-01-31", code: "LEA-12", kind: "lease" }], total: 1 };
    expect(validation.validate(contracts, answer)).toEqual({ valid: true });
  });

  it("names the first error by the answer's JSON pointer and the validator's message", () => {
    const answer = { items: [{ name: "Office lease", renews: "next year", code: "LEA-12", kind: "lease" }], total: 1 };
    expect(validation.validate(contracts, answer)).toMatchObject({ valid: false, pointer: "/items/0/renews", repairable: true });
    const missing = validation.validate(contracts, { items: [] });
    expect(missing).toMatchObject({ valid: false, pointer: "", message: 'Instance does not have required property "total".' });
  });

  it("checks patterns with the linear-time engine and says which pattern failed", () => {
    const verdict = validation.validate(contracts, { items: [{ name: "x", renews: "2027-01-31", code: "lea-12", kind: "lease" }], total: 1 });
    expect(verdict).toEqual({ valid: false, pointer: "/items/0/code", message: 'String must match the pattern "^[A-Z]{3}-\\\\d+$".', repairable: true });
  });

  it("checks URI formats by parsing them", () => {
    const schema = { type: "object", properties: { link: { type: "string", format: "uri" } } };
    expect(validation.validate(schema, { link: "https://example.com/a" })).toEqual({ valid: true });
    expect(validation.validate(schema, { link: "not a link" })).toMatchObject({ valid: false, pointer: "/link", message: "String must be an absolute URI." });
  });

  it("matches patternProperties through the answer's own property names", () => {
    const schema = { type: "object", patternProperties: { "^x-": { type: "number" } }, additionalProperties: false };
    expect(validation.validate(schema, { "x-a": 1, "x-b": 2 })).toEqual({ valid: true });
    expect(validation.validate(schema, { "x-a": "one" })).toMatchObject({ valid: false, pointer: "/x-a" });
    expect(validation.validate(schema, { y: 1 })).toMatchObject({ valid: false });
    const unicode = { type: "object", patternProperties: { "^ü": { type: "number" } }, additionalProperties: false };
    expect(validation.validate(unicode, { "ü-😀 (x)": 1, "ü.[a]": 2 })).toEqual({ valid: true });
    expect(validation.validate(unicode, { "😀ü": 1 })).toMatchObject({ valid: false });
  });

  it("leaves the validator's format table as it found it", () => {
    const before = Object.keys(validatorFormats).sort();
    validation.validate(contracts, { items: [{ name: "x", renews: "2027-01-31", code: "LEA-1", kind: "lease" }], total: 1 });
    expect(Object.keys(validatorFormats).sort()).toEqual(before);
  });

  it("treats formats nobody checks as annotations", () => {
    expect(validation.validate({ type: "string", format: "x-anything" }, "text")).toEqual({ valid: true });
  });

  it("stops an answer whose validation multiplies with its depth, and says asking again cannot help", () => {
    const branch = { type: "object", properties: { a: { $ref: "#/$defs/n" } } };
    const schema = { $defs: { n: { oneOf: [branch, { ...branch, required: ["a"] }, { ...branch, minProperties: 1 }] } }, $ref: "#/$defs/n" };
    expect(validation.check(schema)).toBeNull();
    let deep: unknown = {};
    for (let level = 0; level < 20; level += 1) deep = { a: deep };
    expect(validation.validate(schema, deep)).toMatchObject({ valid: false, repairable: false, message: expect.stringContaining("subschema evaluations") });
  });

  it("keeps a bounded number of schemas ready", () => {
    const small = new SchemaValidation({ ...limits, cacheSize: 2 });
    for (let index = 0; index < 5; index += 1) expect(small.check({ type: "object", title: `t${index}` })).toBeNull();
    expect((small as unknown as { ready: Map<string, unknown> }).ready.size).toBe(2);
  });

  it("keeps schemas ready within a bound in bytes, their compiled patterns counted", () => {
    const light = new SchemaValidation({ ...limits, cacheBytes: 1_000_000 });
    // Each holds a pattern of about 2,000 instructions (about 320 KB compiled): three fit, not ten.
    for (let index = 0; index < 10; index += 1) expect(light.check({ type: "string", pattern: `^${"a".repeat(index)}.{1,1000}$` })).toBeNull();
    const kept = (light as unknown as { ready: Map<string, unknown> }).ready.size;
    expect(kept).toBeGreaterThanOrEqual(1);
    expect(kept).toBeLessThanOrEqual(3);
  });

  it("compiles each pattern once: the check, the guard and every answer's validation share it", () => {
    const compile = vi.spyOn(RE2JS, "compile");
    try {
      const fresh = new SchemaValidation(limits);
      const schema = { type: "object", patternProperties: { "^x-[a-z]+$": { type: "string", pattern: "^[A-Z]+$" } }, additionalProperties: false };
      expect(fresh.check(schema)).toBeNull();
      for (let index = 0; index < 5; index += 1) expect(fresh.validate(schema, { [`x-${"a".repeat(index + 1)}`]: "OK" })).toEqual({ valid: true });
      expect(fresh.validate(schema, { "x-b": "no" })).toMatchObject({ valid: false, pointer: "/x-b" });
      expect(compile).toHaveBeenCalledTimes(2);
    } finally {
      compile.mockRestore();
    }
  });
});

describe("SchemaValidation of work the evaluations do not show", () => {
  const validation = new SchemaValidation(limits);

  it("measures uniqueItems (every pair of items compared) before validating, and does not validate past the budget", () => {
    const schema = { type: "array", items: { type: "string" }, uniqueItems: true };
    expect(validation.validate(schema, Array.from({ length: 500 }, (_, index) => `item ${index}`))).toEqual({ valid: true });
    expect(validation.validate(schema, ["a", "b", "a"])).toMatchObject({ valid: false, repairable: true });
    // 20,000 short strings: 400 million comparisons, 4 s in the validator.
    const verdict = validation.validate(schema, Array.from({ length: 20_000 }, (_, index) => `item ${index}`));
    expect(verdict).toMatchObject({ valid: false, repairable: false, message: expect.stringContaining("uniqueItems") });
  });

  it("measures enum and const comparisons of whole values", () => {
    const members = Array.from({ length: 400 }, (_, index) => ({ kind: index, tags: ["a", "b", "c", "d"] }));
    const schema = { type: "array", items: { enum: members } };
    expect(validation.validate(schema, [members[3], members[7]])).toEqual({ valid: true });
    const many = Array.from({ length: 5000 }, () => ({ kind: 399, tags: ["a", "b", "c", "d"] }));
    expect(validation.validate(schema, many)).toMatchObject({ valid: false, repairable: false, message: expect.stringContaining("enum") });
  });

  it("decides patterns where they stand: inside anyOf, not and if", () => {
    const either = { anyOf: [{ type: "string", pattern: "^a" }, { type: "string", pattern: "^b" }] };
    expect(validation.validate(either, "a1")).toEqual({ valid: true });
    expect(validation.validate(either, "b1")).toEqual({ valid: true });
    expect(validation.validate(either, "c1")).toMatchObject({ valid: false });
    const never = { type: "object", properties: { a: { not: { pattern: "^x" } } } };
    expect(validation.validate(never, { a: "y" })).toEqual({ valid: true });
    expect(validation.validate(never, { a: "x1" })).toMatchObject({ valid: false, pointer: "/a" });
    const conditional = { if: { pattern: "^id-" }, then: { maxLength: 5 }, else: { minLength: 1 } };
    expect(validation.validate(conditional, "id-12")).toEqual({ valid: true });
    expect(validation.validate(conditional, "id-123")).toMatchObject({ valid: false });
    expect(validation.validate(conditional, "x")).toEqual({ valid: true });
    const link = { type: "array", items: { type: "string", format: "uri" } };
    expect(validation.validate(link, ["https://example.com", "https://example.org"])).toEqual({ valid: true });
    expect(validation.validate(link, ["https://example.com", "nope"])).toEqual({ valid: false, pointer: "/1", message: "String must be an absolute URI.", repairable: true });
  });
});

describe("SchemaValidation through the validator's public API", () => {
  it("never writes into the validator's format table (it would throw here)", () => {
    Object.preventExtensions(validatorFormats);
    const validation = new SchemaValidation(limits);
    const answer = { items: [{ name: "x", renews: "2027-01-31", code: "LEA-1", kind: "lease" }], total: 1 };
    expect(validation.validate(contracts, answer)).toEqual({ valid: true });
    expect(validation.validate(contracts, { ...answer, items: [{ ...answer.items[0], code: "x" }] })).toMatchObject({ valid: false, message: expect.stringContaining("pattern") });
    expect(validation.validate({ type: "string", format: "uri" }, "nope")).toMatchObject({ valid: false, message: "String must be an absolute URI." });
  });
});

describe("SchemaValidation of hostile schemas", () => {
  beforeAll(compiled, BUILD_TIMEOUT_MS);
  const validation = new SchemaValidation(limits);
  let deep: Record<string, unknown> = { type: "string" };
  for (let level = 0; level < 20; level += 1) deep = { type: "object", properties: { a: deep } };
  const defs: Record<string, unknown> = { d0: { type: "string" } };
  for (let level = 1; level <= 30; level += 1) defs[`d${level}`] = { anyOf: [{ $ref: `#/$defs/d${level - 1}` }, { $ref: `#/$defs/d${level - 1}` }] };

  it.each([
    ["not an object", [1, 2], "", "must be a JSON object"],
    ["deeply nested", deep, "/properties/a", "nested more than 24 levels"],
    ["huge", { type: "object", description: "x".repeat(70_000) }, "", "longer than 65536"],
    ["$data", { type: "object", properties: { a: { type: "number", maximum: { $data: "1/b" } } } }, "/properties/a/maximum/$data", "$data"],
    ["a remote $ref", { $ref: "https://schemas.example.com/contract.json" }, "/$ref", "remote references are never fetched"],
    ["a $ref to nothing", { type: "object", properties: { a: { $ref: "#/$defs/missing" } } }, "/properties/a/$ref", "points to nothing"],
    ["a $ref loop that never reaches a value", { $defs: { a: { $ref: "#/$defs/b" }, b: { allOf: [{ $ref: "#/$defs/a" }] } }, $ref: "#/$defs/a" }, "", "refers to itself"],
    ["definitions that expand exponentially", { $defs: defs, $ref: "#/$defs/d30" }, "", "more than 1000 subschemas"],
    ["a backreference", { type: "string", pattern: "^(a+)\\1$" }, "/pattern", "backreference"],
    ["a lookahead", { type: "string", pattern: "^(?=a)(a|aa)+$" }, "/pattern", "linear time"],
    ["an invalid expression", { type: "string", pattern: "(" }, "/pattern", "not a valid regular expression"],
    ["a patternProperties key that needs backtracking", { patternProperties: { "(?<=x)y": {} } }, "/patternProperties/(?<=x)y", "linear time"],
    ["$dynamicRef", { $dynamicRef: "#node" }, "/$dynamicRef", "not supported"],
    ["a short pattern of a huge program", { type: "string", pattern: "x{1,1000}".repeat(111).slice(0, 999) }, "/pattern", "too large a program"],
    ["a patternProperties key of a huge program", { patternProperties: { ["x{1,1000}".repeat(111).slice(0, 999)]: {} } }, "/patternProperties/", "too large a program"],
    [
      "patterns whose programs add up past the schema's budget",
      { type: "object", properties: Object.fromEntries([1, 2, 3, 4].map((n) => [`p${n}`, { type: "string", pattern: `^${"a".repeat(n)}.{1,1000}$` }])) },
      "/properties/p",
      "compiled instructions",
    ],
  ])("refuses %s", (_name, schema, pointer, message) => {
    const problem = validation.check(schema as Record<string, unknown>);
    expect(problem?.pointer.startsWith(pointer)).toBe(true);
    expect(problem?.message).toContain(message);
  });

  it("accepts nested quantifiers, which the linear-time engine matches without backtracking", async () => {
    const schema = { type: "object", properties: { a: { type: "string", pattern: "^(a+)+$" } } };
    expect(validation.check(schema)).toBeNull();
    const verdict = await validateWithin(schema, { a: `${"a".repeat(50_000)}!` }, 20_000);
    expect(verdict).toMatchObject({ valid: false, pointer: "/a" });
  });
});

/**
 * Validates on a worker thread (the build in dist/, made current by `compiled()`) and fails if it has
 * not returned `limitMs` after the module loaded: a pattern run by a backtracking engine would block
 * its thread for hours, so the limit is kept from another one. A hang guard, not a speed test.
 */
async function validateWithin(schema: unknown, value: unknown, limitMs: number): Promise<unknown> {
  const moduleUrl = new URL("../../../dist/src/structured/schema-validator.js", import.meta.url).href;
  const worker = new Worker(
    `const { parentPort, workerData } = require("node:worker_threads");
     import(workerData.moduleUrl).then(({ SchemaValidation }) => {
       parentPort.postMessage({ loaded: true });
       const validation = new SchemaValidation({ maxBytes: 65536, maxDepth: 24 });
       parentPort.postMessage({ result: validation.validate(workerData.schema, workerData.value) });
     });`,
    { eval: true, workerData: { moduleUrl, schema, value } },
  );
  let timer: NodeJS.Timeout | undefined;
  try {
    return await new Promise((resolve, reject) => {
      worker.on("message", (message: { loaded?: true; result?: unknown }) => {
        if (message.loaded) timer = setTimeout(() => reject(new Error(`validation took over ${limitMs} ms`)), limitMs);
        else resolve(message.result);
      });
      worker.once("error", reject);
    });
  } finally {
    clearTimeout(timer);
    await worker.terminate();
  }
}
