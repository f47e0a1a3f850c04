import { createHash } from "node:crypto";
import { type OutputUnit, type Schema, type SchemaDraft, Validator } from "@cfworker/json-schema";
import { type AnswerBudget, measureAnswer, type MeasuredSchema } from "./answer-cost.js";
import { type CheckedSchema, checkSchema, type SchemaLimits, type SchemaProblem } from "./schema-bounds.js";
import { SchemaPatterns } from "./schema-patterns.js";
import { guardSchema, type GuardedSchema, propertyNames, type RefusedMarker, type StringPredicate, withLiteralPropertyPatterns, withRefusedStrings } from "./string-predicates.js";
import type { SchemaNode } from "./schema-walk.js";

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
  /** Most steps of comparing and matching one answer may cost (`uniqueItems` pairs, `enum`, `const`, characters matched). */
  workBudget?: number;
  /** Most distinct property names an answer may have when the schema uses `patternProperties`. */
  maxPropertyNames?: number;
}

/** A checked schema, ready to validate answers. */
interface ReadySchema {
  guarded: GuardedSchema;
  draft: SchemaDraft;
  /** The validator of the guarded schema, for an answer none of whose strings the adapter's checks refuse. */
  validator: Validator;
  /** The check's copy of the schema, its references resolved, that answers are measured against. */
  measured: MeasuredSchema;
  /** The JSON pointer of each subschema of `measured.root`. */
  pointers: Map<SchemaNode, string>;
}

/** A schema's verdict as kept by its hash, and what keeping it costs. */
interface Kept {
  entry: ReadySchema | SchemaProblem;
  bytes: number;
}

/** What one character of a kept schema's JSON costs, about: the parsed copy, the guarded copy and the validator's and the measure's copies. */
const BYTES_PER_SCHEMA_CHARACTER = 32;

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
 * (docs/structured-answers.md#the-schema-is-untrusted), with `@cfworker/json-schema` through its
 * public API alone: it interprets a schema and generates no code from it (ajv compiles a schema
 * into JavaScript, 25–660 ms for a schema of 1,500 properties against about 1 ms here: the
 * measurement is in docs/structured-answers.md#the-schema-is-untrusted). A schema is
 * checked once (`checkSchema`: size, depth, references, patterns and their programs) and kept by
 * its hash, within `cacheSize` schemas and `cacheBytes`; patterns run on RE2's linear-time engine,
 * never on the backtracking one. Each answer is measured before it is validated (`measureAnswer`:
 * subschema evaluations, and the comparing and matching the validator does not count), and one
 * that would cost more than the budgets is not validated. Lives on the adapter: nothing is shared
 * between adapters.
 */
export class SchemaValidation {
  private readonly ready = new Map<string, Kept>();
  private readonly cacheSize: number;
  private readonly cacheBytes: number;
  private keptBytes = 0;
  private readonly budget: AnswerBudget;
  private readonly maxPropertyNames: number;

  constructor(private readonly options: SchemaValidationOptions) {
    this.cacheSize = options.cacheSize ?? 256;
    this.cacheBytes = options.cacheBytes ?? 64 * 1024 * 1024;
    this.budget = { evaluations: options.evaluationBudget ?? 50_000, work: options.workBudget ?? 2_000_000 };
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
    const names = entry.guarded.hasPatternProperties ? propertyNames(value) : null;
    if (names && names.size > this.maxPropertyNames) {
      return tooCostly(`has more than ${this.maxPropertyNames} distinct property names to match against patternProperties`);
    }
    const cost = measureAnswer(entry.measured, value, this.budget);
    if ("tooCostly" in cost) return tooCostly(cost.tooCostly);
    let validator = entry.validator;
    let markers: RefusedMarker[] = [];
    if (cost.failures.size > 0 || names) {
      const failures = new Map<string, Map<StringPredicate, Set<string>>>();
      for (const [node, refused] of cost.failures) failures.set(entry.pointers.get(node) ?? "", refused);
      const told = withRefusedStrings(entry.guarded.schema, failures);
      markers = told.markers;
      const { patterns } = entry.measured;
      const literal = names ? withLiteralPropertyPatterns(told.schema, names, this.maxPropertyNames, patterns) : told.schema;
      validator = new Validator((literal ?? told.schema) as Schema, entry.draft, true);
    }
    const result = validator.validate(value);
    return result.valid ? { valid: true } : firstError(result.errors, markers, value);
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
    const checked = checkSchema(schema, this.options, patterns);
    const entry = "copy" in checked ? prepare(schema, checked, patterns) : checked;
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
}

/**
 * A checked schema made ready: guarded, its validator built; answers are measured against the
 * check's resolved copy (its `pattern` keywords are left there unread: the walk runs the guard's checks).
 */
function prepare(schema: SchemaNode, checked: CheckedSchema, patterns: SchemaPatterns): ReadySchema {
  const guarded = guardSchema(schema, patterns);
  const draft = draftOf(schema);
  const { copy: root, lookup, nodes } = checked;
  const predicates = new Map<SchemaNode, StringPredicate[]>();
  for (const { node, pointer } of nodes) {
    const asked = guarded.predicates.get(pointer);
    if (asked) predicates.set(node, asked);
  }
  const pointers = new Map(nodes.map(({ node, pointer }) => [node, pointer]));
  const validator = new Validator(structuredClone(guarded.schema) as Schema, draft, true);
  return { guarded, draft, validator, measured: { root, lookup, predicates, patterns }, pointers };
}

function tooCostly(why: string): SchemaVerdict {
  return { valid: false, pointer: "", message: `the answer cannot be checked against this schema: it ${why}`, repairable: false };
}

/** Keywords whose errors only say that something under them failed: the error that explains comes after. */
const WRAPPERS = new Set(["properties", "patternProperties", "additionalProperties", "unevaluatedProperties", "items", "prefixItems", "additionalItems", "unevaluatedItems", "contains", "propertyNames", "$ref", "allOf", "anyOf", "oneOf", "then", "else", "dependentSchemas", "dependencies"]);

/** The value at a JSON pointer of the validator's (`#/items/0`), or undefined. */
function valueAt(value: unknown, location: string): unknown {
  let current = value;
  for (const segment of location.replace(/^#\/?/, "").split("/").filter((part) => part !== "")) {
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<string, unknown>)[decodeURIComponent(segment).replaceAll("~1", "/").replaceAll("~0", "~")];
  }
  return current;
}

/** The first error that explains itself, with the adapter's own checks (told as `not enum`) named by what they ask. */
function firstError(errors: readonly OutputUnit[], markers: readonly RefusedMarker[], value: unknown): SchemaVerdict {
  const chosen = errors.find((error) => !WRAPPERS.has(error.keyword)) ?? errors[0];
  const location = chosen?.instanceLocation ?? "#";
  let message = chosen?.error ?? "does not match the schema";
  if (chosen?.keyword === "not") {
    const text = valueAt(value, location);
    const marker = markers.find((candidate) => chosen.keywordLocation.endsWith(`/allOf/${candidate.allOfIndex}/not`) && typeof text === "string" && candidate.strings.has(text));
    if (marker) message = `String must ${marker.label}.`;
  }
  return { valid: false, pointer: location.replace(/^#/, ""), message, repairable: true };
}
