import type { SchemaPatterns } from "./schema-patterns.js";
import { isSchemaNode, type SchemaNode, subschemas } from "./schema-walk.js";

/** A check of one string that the adapter makes itself, and what it asks for (for the error message). */
export interface StringPredicate {
  test(text: string): boolean;
  /** `match the pattern "^[A-Z]{3}$"`, `be a URI`. */
  label: string;
}

/**
 * Formats whose checks in `@cfworker/json-schema` stay linear in the text (anchored expressions
 * with bounded repetition, or parsing): left to the validator.
 */
const VALIDATOR_FORMATS = new Set(["date", "time", "date-time", "duration", "email", "hostname", "ipv4", "ipv6", "uuid", "json-pointer", "relative-json-pointer", "regex"]);

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/**
 * Formats the adapter checks by parsing instead: the validator's expressions for these can
 * backtrack for a long time on long text (docs/structured-answers.md#the-schema-is-untrusted).
 */
const PARSED_FORMATS: Record<string, StringPredicate> = {
  uri: { test: (text) => SCHEME.test(text) && URL.canParse(text), label: "be an absolute URI" },
  iri: { test: (text) => SCHEME.test(text) && URL.canParse(text), label: "be an absolute IRI" },
  url: { test: (text) => /^(?:https?|ftp):\/\//i.test(text) && URL.canParse(text), label: "be a URL" },
  "uri-reference": { test: (text) => URL.canParse(text, "http://reference.invalid/"), label: "be a URI reference" },
  "iri-reference": { test: (text) => URL.canParse(text, "http://reference.invalid/"), label: "be an IRI reference" },
};

/** A schema made safe to hand to the validator, and the string checks the adapter makes itself beside it. */
export interface GuardedSchema {
  schema: SchemaNode;
  /** The adapter's checks of strings, by the JSON pointer of the subschema that asks them (`/properties/code`). */
  predicates: Map<string, StringPredicate[]>;
  /** Whether the schema has `patternProperties` (matched per answer: see `withLiteralPropertyPatterns`). */
  hasPatternProperties: boolean;
}

/**
 * A copy of a checked schema in which no expression of the caller's reaches the JavaScript regular
 * expression engine, which backtracks (docs/structured-answers.md#the-schema-is-untrusted): each
 * `pattern` is taken out and becomes a check of the adapter's, by RE2's linear-time engine (the
 * schema's `patterns`, compiled by its check, never again here); formats the validator cannot
 * check in linear time are checked by parsing, the same way; formats nobody checks are dropped
 * (JSON Schema makes `format` an annotation unless asked). The answer's strings are checked
 * before the validator runs (`measureAnswer`), and the validator is told those refused
 * (`withRefusedStrings`).
 */
export function guardSchema(checked: SchemaNode, patterns: SchemaPatterns): GuardedSchema {
  const schema = structuredClone(checked);
  const predicates = new Map<string, StringPredicate[]>();
  let hasPatternProperties = false;
  const addCheck = (pointer: string, predicate: StringPredicate) => {
    predicates.set(pointer, [...(predicates.get(pointer) ?? []), predicate]);
  };
  for (const { node, pointer } of subschemas(schema)) {
    if (isSchemaNode(node.patternProperties)) hasPatternProperties = true;
    if (typeof node.format === "string" && !VALIDATOR_FORMATS.has(node.format)) {
      const parsed = PARSED_FORMATS[node.format];
      delete node.format;
      if (parsed) addCheck(pointer, parsed);
    }
    if (typeof node.pattern === "string") {
      const compiled = patterns.get(node.pattern);
      // Compiled by the check (checkSchema): a pattern that does not compile never gets here.
      if (compiled) addCheck(pointer, { test: compiled.test, label: `match the pattern ${JSON.stringify(node.pattern)}` });
      delete node.pattern;
    }
  }
  return { schema, predicates, hasPatternProperties };
}

/** The label of the adapter's check an injected `{not: {enum}}` stands for, by its index in its subschema's `allOf`. */
export interface RefusedMarker {
  allOfIndex: number;
  label: string;
  strings: ReadonlySet<string>;
}

/**
 * A copy of a guarded schema in which each subschema whose checks refused some of the answer's
 * strings (`failures`, by pointer) refuses exactly those strings, with `{not: {enum: [...]}}`
 * appended to its `allOf`: the validator then decides what a refused string means where it is
 * (inside `anyOf`, `not`, `if`) without running any expression of the caller's. Returns the
 * markers, for the error message.
 */
export function withRefusedStrings(
  guarded: SchemaNode,
  failures: ReadonlyMap<string, ReadonlyMap<StringPredicate, ReadonlySet<string>>>,
): { schema: SchemaNode; markers: RefusedMarker[] } {
  const schema = structuredClone(guarded);
  const markers: RefusedMarker[] = [];
  for (const { node, pointer } of subschemas(schema)) {
    const refused = failures.get(pointer);
    if (!refused) continue;
    const allOf = Array.isArray(node.allOf) ? [...(node.allOf as unknown[])] : [];
    for (const [predicate, strings] of refused) {
      markers.push({ allOfIndex: allOf.length, label: predicate.label, strings });
      allOf.push({ not: { enum: [...strings] } });
    }
    node.allOf = allOf;
  }
  return { schema, markers };
}

/** Every distinct property name of a JSON value. */
export function propertyNames(value: unknown): Set<string> {
  const names = new Set<string>();
  const stack = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (typeof current !== "object" || current === null) continue;
    if (!Array.isArray(current)) for (const key of Object.keys(current)) names.add(key);
    stack.push(...Object.values(current));
  }
  return names;
}

/**
 * Text as an expression that matches exactly it: letters and digits as themselves, every other
 * UTF-16 unit as `\\uXXXX` (with the u flag, an escaped surrogate pair is its one code point).
 */
const literal = (text: string) =>
  text.replace(/[^A-Za-z0-9_]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, "0")}`);

/**
 * `patternProperties` rewritten for one answer: each pattern becomes the alternation of the
 * answer's property names it matches (found with the linear-time engine), which the validator's
 * engine matches without backtracking into the caller's expression. Property names are few; the
 * caller bounds them (`maxNames`) and gets null beyond, for a check too costly to make. The
 * patterns are the schema's, compiled once by its check.
 */
export function withLiteralPropertyPatterns(
  guarded: SchemaNode,
  names: ReadonlySet<string>,
  maxNames: number,
  patterns: SchemaPatterns,
): SchemaNode | null {
  if (names.size > maxNames) return null;
  const schema = structuredClone(guarded);
  let unique = 0;
  for (const { node } of subschemas(schema)) {
    if (!isSchemaNode(node.patternProperties)) continue;
    const rewritten: SchemaNode = {};
    for (const [pattern, subschema] of Object.entries(node.patternProperties)) {
      const compiled = patterns.get(pattern);
      const matching = compiled ? [...names].filter((name) => compiled.test(name)) : [];
      // `(?:)` repeated keeps two patterns that match the same names apart as keys.
      const alternatives = matching.length > 0 ? `^(?:${matching.map(literal).join("|")})$` : "[^\\s\\S]";
      rewritten[`${alternatives}${"(?:)".repeat(unique)}`] = subschema;
      unique += 1;
    }
    node.patternProperties = rewritten;
  }
  return schema;
}
