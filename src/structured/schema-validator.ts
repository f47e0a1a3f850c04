import { createHash } from "node:crypto";
import { format as validatorFormats, type OutputUnit, type Schema, type SchemaDraft, Validator } from "@cfworker/json-schema";
import { checkSchema, type SchemaLimits, type SchemaProblem } from "./schema-bounds.js";
import { guardSchema, type GuardedSchema, propertyNames, withLiteralPropertyPatterns } from "./string-predicates.js";
import { SchemaPatterns } from "./schema-patterns.js";
import { type SchemaNode, subschemas } from "./schema-walk.js";

/** Whether an answer's JSON matches the schema, and if not the first thing wrong (for the repair turn and the failure). */
export type SchemaVerdict =
  | { valid: true }
  /** `pointer` is a JSON pointer into the answer (`/items/0/date`); `repairable` is false when asking again cannot help. */
  | { valid: false; pointer: string; message: string; repairable: boolean };

/** The settings of the schemas' checks and cache. */
export interface SchemaValidationOptions extends SchemaLimits {
  /** Schemas kept ready, by hash (least recently used dropped first). */
  cacheSize?: number;
  /** Most bytes the schemas kept ready may hold, about (their JSON and their compiled patterns). */
  cacheBytes?: number;
  /** Most subschema evaluations one answer may cost; beyond it the answer is not validated. */
  evaluationBudget?: number;
  /** Most distinct property names an answer may have when the schema uses `patternProperties`. */
  maxPropertyNames?: number;
}

/** A checked schema, ready to validate answers. */
interface ReadySchema {
  guarded: GuardedSchema;
  draft: SchemaDraft;
  /** The validator of the guarded schema; rebuilt per answer when it has `patternProperties`. */
  validator: Validator;
  /** Evaluations left in the current validation. */
  budget: { left: number };
  /** Its patterns, compiled once by the check. */
  patterns: SchemaPatterns;
}

/** A schema's verdict as kept by its hash, and what keeping it costs. */
interface Kept {
  entry: ReadySchema | SchemaProblem;
  bytes: number;
}

/** What one character of a kept schema's JSON costs, about: the parsed copy, the guarded copy and the validator's copy of it. */
const BYTES_PER_SCHEMA_CHARACTER = 24;

/** Keywords the validator reads from every subschema on every evaluation; the first is counted. */
const COUNTED = "$recursiveAnchor";

/** The validator's draft, from `$schema` (2020-12, OpenAI's, when it names none the validator knows). */
function draftOf(schema: SchemaNode): SchemaDraft {
  const named = typeof schema.$schema === "string" ? schema.$schema : "";
  if (named.includes("draft-04")) return "4";
  if (named.includes("draft-07")) return "7";
  if (named.includes("2019-09")) return "2019-09";
  return "2020-12";
}

/**
 * The caller's JSON Schemas, checked and validated as untrusted input
 * (docs/structured-answers.md#the-schema-is-untrusted), with `@cfworker/json-schema`: it interprets
 * a schema and generates no code from it (ajv compiles a schema into JavaScript, and its own
 * security notes say to trust a schema as much as the application's code). A schema is checked
 * once (`checkSchema`: size, depth, references, patterns) and kept by its hash; patterns run on
 * RE2's linear-time engine, never on the backtracking one; one answer's validation is cut off
 * after `evaluationBudget` subschema evaluations (nested `anyOf`s can multiply with the answer's
 * depth). Lives on the adapter: nothing is shared between adapters.
 */
export class SchemaValidation {
  private readonly ready = new Map<string, Kept>();
  private readonly cacheSize: number;
  private readonly cacheBytes: number;
  private keptBytes = 0;
  private readonly evaluationBudget: number;
  private readonly maxPropertyNames: number;

  constructor(private readonly options: SchemaValidationOptions) {
    this.cacheSize = options.cacheSize ?? 256;
    this.cacheBytes = options.cacheBytes ?? 64 * 1024 * 1024;
    this.evaluationBudget = options.evaluationBudget ?? 50_000;
    this.maxPropertyNames = options.maxPropertyNames ?? 500;
  }

  /** What is wrong with a caller's schema, or null when it can be used (the result is kept). */
  check(schema: SchemaNode): SchemaProblem | null {
    const entry = this.entry(schema);
    return "validator" in entry ? null : entry;
  }

  /** Validates an answer's JSON against a schema `check` accepted. */
  validate(schema: SchemaNode, value: unknown): SchemaVerdict {
    const entry = this.entry(schema);
    if (!("validator" in entry)) return { valid: false, pointer: "", message: `the schema ${entry.message}`, repairable: false };
    let validator = entry.validator;
    if (entry.guarded.hasPatternProperties) {
      const names = propertyNames(value);
      const literal = withLiteralPropertyPatterns(entry.guarded.schema, names, this.maxPropertyNames, entry.patterns);
      if (!literal) return tooCostly(`has more than ${this.maxPropertyNames} distinct property names to match against patternProperties`);
      validator = this.validatorOf(literal, entry.draft, entry.budget);
    }
    const { predicates } = entry.guarded;
    entry.budget.left = this.evaluationBudget;
    // The validator looks formats up by name in its table as it runs; the adapter's checks are in
    // it only for this synchronous call (nothing else can run meanwhile) and under names unique
    // to this schema.
    for (const [name, predicate] of predicates) validatorFormats[name] = predicate.test;
    try {
      const result = validator.validate(value);
      return result.valid ? { valid: true } : firstError(result.errors, predicates);
    } catch (error) {
      if (error instanceof BudgetSpent) return tooCostly(`needs more than ${this.evaluationBudget} subschema evaluations`);
      throw error;
    } finally {
      for (const name of predicates.keys()) delete validatorFormats[name];
    }
  }

  private entry(schema: SchemaNode): ReadySchema | SchemaProblem {
    const text = JSON.stringify(schema);
    const key = createHash("sha256").update(text).digest("base64url");
    const known = this.ready.get(key);
    if (known) {
      this.ready.delete(key);
      this.ready.set(key, known);
      return known.entry;
    }
    const patterns = new SchemaPatterns();
    const entry = checkSchema(schema, this.options, patterns) ?? this.prepare(schema, `adapter-check-${key.slice(0, 16)}`, patterns);
    const bytes = "validator" in entry ? text.length * BYTES_PER_SCHEMA_CHARACTER + patterns.bytes : text.length;
    this.ready.set(key, { entry, bytes });
    this.keptBytes += bytes;
    // Least recently used first, until both bounds hold (the newest stays, whatever it weighs: it is in use).
    for (const [oldest, kept] of this.ready) {
      if (this.ready.size <= 1 || (this.ready.size <= this.cacheSize && this.keptBytes <= this.cacheBytes)) break;
      this.ready.delete(oldest);
      this.keptBytes -= kept.bytes;
    }
    return entry;
  }

  private prepare(schema: SchemaNode, prefix: string, patterns: SchemaPatterns): ReadySchema {
    const guarded = guardSchema(schema, prefix, patterns);
    const draft = draftOf(schema);
    const budget = { left: 0 };
    return { guarded, draft, budget, patterns, validator: this.validatorOf(guarded.schema, draft, budget) };
  }

  /** A validator over a copy of `schema` whose every subschema counts its evaluations against `budget`. */
  private validatorOf(schema: SchemaNode, draft: SchemaDraft, budget: { left: number }): Validator {
    const counted = structuredClone(schema);
    for (const { node } of subschemas(counted)) {
      Object.defineProperty(node, COUNTED, {
        enumerable: false,
        get() {
          budget.left -= 1;
          if (budget.left < 0) throw new BudgetSpent();
          return undefined;
        },
      });
    }
    return new Validator(counted as Schema, draft, true);
  }
}

/** Thrown from inside the validator when an answer's validation has cost too much. */
class BudgetSpent extends Error {}

function tooCostly(why: string): SchemaVerdict {
  return { valid: false, pointer: "", message: `the answer cannot be checked against this schema: it ${why}`, repairable: false };
}

/** Keywords whose errors only say that something under them failed: the error that explains comes after. */
const WRAPPERS = new Set(["properties", "patternProperties", "additionalProperties", "unevaluatedProperties", "items", "prefixItems", "additionalItems", "unevaluatedItems", "contains", "propertyNames", "$ref", "allOf", "anyOf", "oneOf", "then", "else", "dependentSchemas", "dependencies"]);

/** The first error that explains itself, with the adapter's own checks named by what they ask. */
function firstError(errors: readonly OutputUnit[], predicates: GuardedSchema["predicates"]): SchemaVerdict {
  const chosen = errors.find((error) => !WRAPPERS.has(error.keyword)) ?? errors[0];
  const pointer = (chosen?.instanceLocation ?? "#").replace(/^#/, "");
  let message = chosen?.error ?? "does not match the schema";
  const named = /format "([^"]+)"/.exec(message)?.[1];
  const predicate = named === undefined ? undefined : predicates.get(named);
  if (predicate) message = `String must ${predicate.label}.`;
  return { valid: false, pointer, message, repairable: true };
}

