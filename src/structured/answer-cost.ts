import type { Schema } from "@cfworker/json-schema";
import type { SchemaPatterns } from "./schema-patterns.js";
import type { StringPredicate } from "./string-predicates.js";
import { isSchemaNode, type SchemaNode } from "./schema-walk.js";

/** What one answer's validation may cost (docs/structured-answers.md#the-schema-is-untrusted). */
export interface AnswerBudget {
  /** Most subschema evaluations (a subschema checked against a value, each time). */
  evaluations: number;
  /** Most steps of comparing and matching: `uniqueItems` pairs, `enum` and `const` comparisons, characters matched. */
  work: number;
}

/** The schema an answer is measured against: its subschemas, references resolved, and the adapter's string checks by subschema. */
export interface MeasuredSchema {
  root: SchemaNode;
  /** `dereference`'s lookup of `root` (`@cfworker/json-schema`), for `$ref`. */
  lookup: Record<string, Schema | boolean>;
  /** The adapter's checks of strings (patterns, parsed formats), by the subschema that asks them. */
  predicates: ReadonlyMap<SchemaNode, readonly StringPredicate[]>;
  patterns: SchemaPatterns;
}

/** The strings of the answer an adapter's check refused, by subschema and check; or why the answer costs too much. */
export type AnswerCost =
  | { failures: Map<SchemaNode, Map<StringPredicate, Set<string>>> }
  | { tooCostly: string };

const IN_PLACE_SINGLE = ["not", "if", "then", "else"] as const;
const IN_PLACE_LISTS = ["allOf", "anyOf", "oneOf"] as const;
const DEPENDENT = ["dependentSchemas", "dependencies"] as const;

/**
 * The size of a part of the answer, in members, for the cost of comparing it (strings compare at
 * once: one step); computed when first asked, for the part and everything in it, without recursion.
 */
function sizeOf(sizes: Map<object, number>, value: unknown): number {
  if (typeof value !== "object" || value === null) return 1;
  const known = sizes.get(value);
  if (known !== undefined) return known;
  const stack: { value: object; expanded: boolean }[] = [{ value, expanded: false }];
  while (stack.length > 0) {
    const top = stack.at(-1) as (typeof stack)[number];
    const children = Object.values(top.value) as unknown[];
    if (!top.expanded) {
      top.expanded = true;
      for (const child of children) if (typeof child === "object" && child !== null && !sizes.has(child)) stack.push({ value: child, expanded: false });
      continue;
    }
    stack.pop();
    sizes.set(top.value, children.reduce<number>((sum, child) => sum + (typeof child === "object" && child !== null ? (sizes.get(child) ?? 1) : 1), 1));
  }
  return sizes.get(value) ?? 1;
}

/**
 * What validating `value` against a schema will cost, measured before the validator runs, over
 * every subschema the validator may check against every part of the value (an upper bound: every
 * branch of `anyOf`, `then` and `else`, `unevaluated*` on every member), without recursion; the
 * walk stops as soon as a budget is spent. It counts the work the validator's evaluation does not
 * show: `uniqueItems` compares every pair of items, `enum` and `const` compare whole values,
 * patterns read whole strings. On the way it runs the adapter's string checks (each once per
 * distinct string) and keeps the strings they refuse, which the validator is then told
 * (`withRefusedStrings`). Reads no library's internals: JSON Schema's own applicators.
 */
export function measureAnswer(schema: MeasuredSchema, value: unknown, budget: AnswerBudget): AnswerCost {
  const sizes = new Map<object, number>();
  const size = (item: unknown) => sizeOf(sizes, item);
  const verdicts = new Map<StringPredicate, Map<string, boolean>>();
  const failures = new Map<SchemaNode, Map<StringPredicate, Set<string>>>();
  const checkedAt = new Map<SchemaNode, number>();
  let evaluations = 0;
  let work = 0;
  const stack: [unknown, unknown][] = [[schema.root, value]];
  const push = (node: unknown, item: unknown) => {
    if (isSchemaNode(node)) stack.push([node, item]);
    else if (typeof node === "boolean") evaluations += 1;
  };
  while (stack.length > 0) {
    const [node, item] = stack.pop() as [SchemaNode, unknown];
    evaluations += 1;
    if (evaluations > budget.evaluations) return { tooCostly: `needs more than ${budget.evaluations} subschema evaluations` };
    if (typeof node.$ref === "string") push(schema.lookup[(node as Schema).__absolute_ref__ ?? node.$ref], item);
    // A comparison stops at the smaller of its two values: at most the answer's part.
    if ("const" in node) work += size(item);
    if (Array.isArray(node.enum)) work += node.enum.length * size(item);
    for (const keyword of IN_PLACE_SINGLE) push(node[keyword], item);
    for (const keyword of IN_PLACE_LISTS) {
      if (Array.isArray(node[keyword])) for (const branch of node[keyword] as unknown[]) push(branch, item);
    }
    if (typeof item === "string") {
      if ("minLength" in node || "maxLength" in node || "format" in node) work += item.length;
      const predicates = schema.predicates.get(node);
      if (predicates) {
        checkedAt.set(node, (checkedAt.get(node) ?? 0) + 1);
        for (const predicate of predicates) if (!verdict(predicate, item)) refused(node, predicate, item);
      }
    } else if (Array.isArray(item)) {
      work += arrayWork(node, item, size);
      applyToItems(node, item, push);
    } else if (typeof item === "object" && item !== null) {
      work += applyToMembers(node, item as Record<string, unknown>, schema.patterns, push);
    }
    if (work > budget.work) return { tooCostly: `needs more than ${budget.work} steps of comparing and matching (uniqueItems, enum, const, patterns)` };
  }
  // The validator is told the refused strings as an `enum` to avoid, compared at each evaluation.
  for (const [node, refusedHere] of failures) {
    for (const strings of refusedHere.values()) work += (checkedAt.get(node) ?? 0) * strings.size;
  }
  if (work > budget.work) return { tooCostly: `needs more than ${budget.work} steps of comparing and matching (uniqueItems, enum, const, patterns)` };
  return { failures };

  function verdict(predicate: StringPredicate, text: string): boolean {
    let known = verdicts.get(predicate);
    if (!known) verdicts.set(predicate, (known = new Map()));
    let passes = known.get(text);
    if (passes === undefined) {
      work += text.length;
      passes = predicate.test(text);
      known.set(text, passes);
    }
    return passes;
  }

  function refused(node: SchemaNode, predicate: StringPredicate, text: string) {
    let byPredicate = failures.get(node);
    if (!byPredicate) failures.set(node, (byPredicate = new Map()));
    let strings = byPredicate.get(predicate);
    if (!strings) byPredicate.set(predicate, (strings = new Set()));
    strings.add(text);
  }
}

/** `uniqueItems` compares every ordered pair of items, each comparison at most as long as the item: (n − 1) × (n + the items' sizes). */
function arrayWork(node: SchemaNode, items: readonly unknown[], size: (item: unknown) => number): number {
  if (node.uniqueItems !== true || items.length < 2) return 0;
  const nested = items.reduce<number>((sum, item) => sum + (typeof item === "object" && item !== null ? size(item) : 0), 0);
  return (items.length - 1) * (items.length + nested);
}

/** The subschemas an array's items are checked against: tuple items, `items`, `additionalItems`, `contains`, `unevaluatedItems`. */
function applyToItems(node: SchemaNode, items: readonly unknown[], push: (node: unknown, item: unknown) => void) {
  const tuple = Array.isArray(node.prefixItems) ? node.prefixItems : Array.isArray(node.items) ? node.items : [];
  items.forEach((item, index) => {
    if (index < tuple.length) push(tuple[index], item);
    else {
      if (!Array.isArray(node.items)) push(node.items, item);
      push(node.additionalItems, item);
    }
    push(node.contains, item);
    push(node.unevaluatedItems, item);
  });
}

/**
 * The subschemas an object's members are checked against (`properties`, `patternProperties`,
 * `additionalProperties`, `unevaluatedProperties`, `propertyNames` on the names, `dependentSchemas`
 * and schema `dependencies` on the object); returns the characters of names matched against patterns.
 */
function applyToMembers(
  node: SchemaNode,
  object: Record<string, unknown>,
  patterns: SchemaPatterns,
  push: (node: unknown, item: unknown) => void,
): number {
  let work = 0;
  const properties = isSchemaNode(node.properties) ? node.properties : {};
  const patterned = isSchemaNode(node.patternProperties) ? Object.entries(node.patternProperties) : [];
  const dependents = DEPENDENT.map((keyword) => node[keyword]).filter(isSchemaNode);
  for (const [name, member] of Object.entries(object)) {
    let matched = Object.hasOwn(properties, name);
    if (matched) push(properties[name], member);
    for (const [pattern, subschema] of patterned) {
      work += name.length;
      if (patterns.get(pattern)?.test(name) === true) {
        matched = true;
        push(subschema, member);
      }
    }
    if (!matched) push(node.additionalProperties, member);
    push(node.unevaluatedProperties, member);
    push(node.propertyNames, name);
    for (const dependent of dependents) if (isSchemaNode(dependent[name])) push(dependent[name], object);
  }
  return work;
}
