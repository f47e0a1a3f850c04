import { ignoredKeyword, schemaArrayKeyword, schemaMapKeyword } from "@cfworker/json-schema";

/** A JSON Schema object as parsed from a request: plain JSON, keywords by name. */
export type SchemaNode = Record<string, unknown>;

/** One subschema of a schema document and its JSON pointer from the root (`/properties/items/items`). */
export interface SchemaAt {
  node: SchemaNode;
  pointer: string;
}

/** Whether a value is a JSON object (not an array, not null). */
export function isSchemaNode(value: unknown): value is SchemaNode {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A JSON pointer segment (RFC 6901). */
export function pointerSegment(key: string | number): string {
  return String(key).replaceAll("~", "~0").replaceAll("/", "~1");
}

/**
 * Every subschema of a schema document, the root first (docs/structured-answers.md#the-schema-is-untrusted):
 * the walk follows the same keywords as the validator's own `dereference`
 * (`@cfworker/json-schema`): single subschemas (`not`, `items`, an unknown keyword's object),
 * arrays of them (`anyOf`, `prefixItems`) and maps of them (`properties`, `$defs`), and skips data
 * keywords (`enum`, `const`, `default`). Iterative, so a deep document cannot overflow it.
 */
export function subschemas(root: SchemaNode): SchemaAt[] {
  const found: SchemaAt[] = [];
  const stack: SchemaAt[] = [{ node: root, pointer: "" }];
  const seen = new Set<SchemaNode>();
  while (stack.length > 0) {
    const current = stack.pop() as SchemaAt;
    // A value built in code (not parsed) may hold one object in two places: it is one subschema.
    if (seen.has(current.node)) continue;
    seen.add(current.node);
    found.push(current);
    for (const [key, value] of Object.entries(current.node)) {
      if (ignoredKeyword[key]) continue;
      const base = `${current.pointer}/${pointerSegment(key)}`;
      if (Array.isArray(value)) {
        if (!schemaArrayKeyword[key]) continue;
        value.forEach((item, index) => {
          if (isSchemaNode(item)) stack.push({ node: item, pointer: `${base}/${index}` });
        });
      } else if (schemaMapKeyword[key] && isSchemaNode(value)) {
        for (const [name, item] of Object.entries(value)) if (isSchemaNode(item)) stack.push({ node: item, pointer: `${base}/${pointerSegment(name)}` });
      } else if (isSchemaNode(value)) {
        stack.push({ node: value, pointer: base });
      }
    }
  }
  return found;
}
