import { dereference, type Schema } from "@cfworker/json-schema";
import type { SchemaPatterns } from "./schema-patterns.js";
import { isSchemaNode, pointerSegment, type SchemaNode, subschemas } from "./schema-walk.js";

/** How much of a caller's schema the adapter takes on (`STRUCTURED_SCHEMA_MAX_*`). */
export interface SchemaLimits {
  /** Longest schema, in characters of its JSON. */
  maxBytes: number;
  /** Deepest nesting, in JSON levels. */
  maxDepth: number;
}

/** What is wrong with a caller's schema: where (a JSON pointer into it) and what. */
export interface SchemaProblem {
  pointer: string;
  message: string;
  /** The schema was not checked at all (the schema worker is busy): not the schema's fault, a 503 the client may retry. */
  busy?: true;
}

/** A schema the check accepted: its copy with references resolved (`dereference`), and its subschemas by pointer. */
export interface CheckedSchema {
  copy: SchemaNode;
  lookup: Record<string, Schema | boolean>;
  nodes: { node: SchemaNode; pointer: string }[];
}

/** Most subschemas one value may be checked against in place (`allOf`, `anyOf`, `$ref`…, all expanded). */
export const MAX_IN_PLACE = 1000;

const UNSUPPORTED_KEYWORDS = ["$recursiveRef", "$recursiveAnchor", "$dynamicRef", "$dynamicAnchor"];
const IN_PLACE_SINGLE = ["not", "if", "then", "else"];
const IN_PLACE_LISTS = ["allOf", "anyOf", "oneOf"];
const IN_PLACE_MAPS = ["dependentSchemas", "dependencies"];

/**
 * Checks a caller's JSON Schema before anything is asked of the workspace
 * (docs/structured-answers.md#the-schema-is-untrusted): a JSON object within `limits` (size, depth);
 * no `$data` anywhere; no dynamic or recursive references; every `$ref` local (`#…`) and resolved
 * within the document; no loop of references that never reaches a value, and at most
 * `MAX_IN_PLACE` subschemas checked in place against one value (a schema of a few lines can name
 * the same definitions over and over); every `pattern` and `patternProperties` key compiles for
 * the linear-time engine within the program budgets of `SchemaPatterns`, into `patterns` (last,
 * so that a schema refused for anything else compiles nothing). The first problem; else the copy
 * the check resolved, which answers are measured against (`measureAnswer`). Never throws.
 */
export function checkSchema(schema: unknown, limits: SchemaLimits, patterns: SchemaPatterns): SchemaProblem | CheckedSchema {
  if (!isSchemaNode(schema)) return { pointer: "", message: "must be a JSON object" };
  const shape = checkShape(schema, limits.maxDepth);
  if (shape) return shape;
  if (JSON.stringify(schema).length > limits.maxBytes) return { pointer: "", message: `is longer than ${limits.maxBytes} characters of JSON` };
  const copy = structuredClone(schema);
  const nodes = subschemas(copy);
  for (const { node, pointer } of nodes) {
    const problem = checkKeywords(node, pointer);
    if (problem) return problem;
  }
  let lookup: Record<string, Schema | boolean>;
  try {
    lookup = dereference(copy as Schema);
  } catch {
    return { pointer: "", message: "has an $id the validator cannot place (a duplicate or an invalid URI)" };
  }
  const pointers = new Map(nodes.map(({ node, pointer }) => [node, pointer]));
  for (const { node, pointer } of nodes) {
    if (typeof node.$ref !== "string") continue;
    const target = lookup[(node as Schema).__absolute_ref__ ?? node.$ref];
    if (target === undefined) return { pointer: `${pointer}/$ref`, message: `points to nothing in this schema (${node.$ref}); only references inside the schema are followed` };
  }
  return checkExpansion(nodes, lookup, pointers) ?? checkPatterns(nodes, patterns) ?? { copy, lookup, nodes };
}

/** Depth and `$data`, over the whole document (data keywords included), without recursion. */
function checkShape(schema: SchemaNode, maxDepth: number): SchemaProblem | null {
  const stack: { value: unknown; pointer: string; depth: number }[] = [{ value: schema, pointer: "", depth: 0 }];
  while (stack.length > 0) {
    const { value, pointer, depth } = stack.pop() as (typeof stack)[number];
    if (typeof value !== "object" || value === null) continue;
    if (depth >= maxDepth) return { pointer, message: `is nested more than ${maxDepth} levels deep` };
    for (const [key, item] of Object.entries(value)) {
      if (key === "$data" && !Array.isArray(value)) return { pointer: `${pointer}/$data`, message: "uses $data, which is not supported" };
      stack.push({ value: item, pointer: `${pointer}/${pointerSegment(key)}`, depth: depth + 1 });
    }
  }
  return null;
}

/** The keywords of one subschema that the adapter refuses. */
function checkKeywords(node: SchemaNode, pointer: string): SchemaProblem | null {
  for (const keyword of UNSUPPORTED_KEYWORDS) {
    if (keyword in node) return { pointer: `${pointer}/${keyword}`, message: `uses ${keyword}, which is not supported` };
  }
  if ("$ref" in node && (typeof node.$ref !== "string" || !node.$ref.startsWith("#"))) {
    return { pointer: `${pointer}/$ref`, message: "must be a reference inside this schema (starting with '#'); remote references are never fetched" };
  }
  return null;
}

/** Every `pattern` and `patternProperties` key, each distinct one compiled once into `patterns`. */
function checkPatterns(nodes: { node: SchemaNode; pointer: string }[], patterns: SchemaPatterns): SchemaProblem | null {
  for (const { node, pointer } of nodes) {
    if ("pattern" in node) {
      if (typeof node.pattern !== "string") return { pointer: `${pointer}/pattern`, message: "must be a string" };
      const compiled = patterns.compile(node.pattern);
      if ("problem" in compiled) return { pointer: `${pointer}/pattern`, message: compiled.problem };
    }
    if (isSchemaNode(node.patternProperties)) {
      for (const key of Object.keys(node.patternProperties)) {
        const compiled = patterns.compile(key);
        if ("problem" in compiled) return { pointer: `${pointer}/patternProperties/${pointerSegment(key)}`, message: `(the pattern) ${compiled.problem}` };
      }
    }
  }
  return null;
}

/** The subschemas checked against the same value as `node`: its in-place applicators and its `$ref`'s target. */
function inPlace(node: SchemaNode, lookup: Record<string, Schema | boolean>): SchemaNode[] {
  const children: unknown[] = [];
  for (const keyword of IN_PLACE_SINGLE) children.push(node[keyword]);
  for (const keyword of IN_PLACE_LISTS) if (Array.isArray(node[keyword])) children.push(...(node[keyword] as unknown[]));
  for (const keyword of IN_PLACE_MAPS) if (isSchemaNode(node[keyword])) children.push(...Object.values(node[keyword]));
  if (typeof node.$ref === "string") children.push(lookup[(node as Schema).__absolute_ref__ ?? node.$ref]);
  return children.filter(isSchemaNode);
}

/** No reference loop that stays on one value, and a bounded in-place expansion of every subschema. */
function checkExpansion(
  nodes: { node: SchemaNode; pointer: string }[],
  lookup: Record<string, Schema | boolean>,
  pointers: Map<SchemaNode, string>,
): SchemaProblem | null {
  const sizes = new Map<SchemaNode, number>();
  const visiting = new Set<SchemaNode>();
  let problem: SchemaProblem | null = null;
  const size = (node: SchemaNode): number => {
    const known = sizes.get(node);
    if (known !== undefined) return known;
    if (visiting.has(node)) {
      problem ??= { pointer: pointers.get(node) ?? "", message: "refers to itself without reaching a value (a loop of $ref or applicators)" };
      return Infinity;
    }
    visiting.add(node);
    let total = 1;
    for (const child of inPlace(node, lookup)) {
      total += size(child);
      if (total > MAX_IN_PLACE) break;
    }
    visiting.delete(node);
    sizes.set(node, total);
    return total;
  };
  for (const { node, pointer } of nodes) {
    const total = size(node);
    if (problem) return problem;
    if (total > MAX_IN_PLACE) return { pointer, message: `checks one value against more than ${MAX_IN_PLACE} subschemas once its references are expanded` };
  }
  return null;
}
