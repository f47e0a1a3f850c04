import { readFileSync } from "node:fs";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";

// The Open Responses specification's published OpenAPI document (2026-04-24), vendored unmodified
// under test/fixtures/openresponses (its README says where from, and under which license),
// compiled once per test file: what the adapter sends is validated against it as against
// OpenAI's (test/helpers/openai-schemas.ts).

type SchemaDocument = { components: { schemas: Record<string, Record<string, any>> } };

const document = JSON.parse(readFileSync(new URL("../fixtures/openresponses/openapi-2026-04-24.json", import.meta.url), "utf8")) as SchemaDocument;

// One widening, where the document contradicts itself: `JsonSchemaResponseFormat.schema` admits
// only null (`anyOf: [{type: "null"}]`), though the same document describes `text.format`
// `json_schema` as carrying the caller's schema, which a response echoes. An echoed schema object
// is allowed; everything else is as published.
const widened = structuredClone(document);
widened.components.schemas.JsonSchemaResponseFormat!.properties.schema = { anyOf: [{ type: "object" }, { type: "null" }] };

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema({ $id: "openresponses", components: widened.components });
const compiled = new Map<string, ValidateFunction>();

/** Validates against one of the specification's schemas (`ResponseResource`, `CompactResource`…): the errors, empty when valid. */
export function openResponsesErrors(name: string, value: unknown): string[] {
  let validate = compiled.get(name);
  if (!validate) {
    validate = ajv.compile({ $ref: `openresponses#/components/schemas/${name}` });
    compiled.set(name, validate);
  }
  return validate(value) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message}`);
}

/** The schema of each streamed event type, from the `text/event-stream` response of `POST /responses`. */
const EVENT_SCHEMAS = new Map(
  (
    (document as any).paths["/responses"].post.responses["200"].content["text/event-stream"].schema.oneOf as { $ref: string }[]
  ).map(({ $ref }) => {
    const name = $ref.split("/").pop() as string;
    return [document.components.schemas[name]!.properties.type.enum[0] as string, name];
  }),
);

/** Validates one streamed event against the specification's schema of its type (a clearer report than the union's). */
export function openResponsesEventErrors(event: { type: string }): string[] {
  const name = EVENT_SCHEMAS.get(event.type);
  return name ? openResponsesErrors(name, event) : [`no event type ${event.type} in the specification`];
}
