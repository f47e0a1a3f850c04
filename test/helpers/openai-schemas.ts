import { readFileSync } from "node:fs";
import { Ajv, type ValidateFunction } from "ajv";

// OpenAI's published schemas, vendored unmodified under test/fixtures/openai (its README says where
// they come from and how to refresh them), compiled once per test file.

type SchemaDocument = { components: { schemas: Record<string, Record<string, unknown>> } };

function load(file: string): SchemaDocument {
  return JSON.parse(readFileSync(new URL(`../fixtures/openai/${file}`, import.meta.url), "utf8")) as SchemaDocument;
}

/** OpenAPI 3.0's `nullable: true` (which some stream schemas still use) as JSON Schema's null type. */
function withNullables(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withNullables);
  if (typeof node !== "object" || node === null) return node;
  const { nullable, ...rest } = node as Record<string, unknown>;
  const converted = Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, withNullables(value)]));
  return nullable === true ? { anyOf: [converted, { type: "null" }] } : converted;
}

/** The interface's FileCitation (docs/architecture/upstream.md#the-chat-completion-resource), which chat messages may also carry. */
const INTERFACE_FILE_CITATION = {
  type: "object",
  required: ["file_citation"],
  properties: {
    type: { type: "string", enum: ["file_citation"] },
    file_citation: { type: "object", required: ["filename"], properties: { filename: { type: "string" } } },
    start_index: { type: ["integer", "null"] },
    end_index: { type: ["integer", "null"] },
  },
};

/** A validator over one document's schemas: `(name, value) => errors` (empty when valid). */
function validatorOf(document: SchemaDocument): (name: string, value: unknown) => string[] {
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema({ $id: "openai", components: withNullables(document.components) });
  const compiled = new Map<string, ValidateFunction>();
  return (name, value) => {
    let validate = compiled.get(name);
    if (!validate) {
      validate = ajv.compile({ $ref: `openai#/components/schemas/${name}` });
      compiled.set(name, validate);
    }
    return validate(value) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message}`);
  };
}

const chat = load("openai-chat-schemas.json");
const widened = structuredClone(chat);
const message = widened.components.schemas.ChatCompletionResponseMessage as { properties: { annotations: { items: unknown } } };
message.properties.annotations.items = { anyOf: [message.properties.annotations.items, INTERFACE_FILE_CITATION] };

/**
 * Validates against OpenAI's chat schemas with one widening: message annotations may also be the
 * interface's `file_citation` (the adapter's default annotation format).
 */
export const openAIErrors = validatorOf(widened);

/** Validates against OpenAI's chat schemas exactly as published. */
export const strictOpenAIErrors = validatorOf(chat);

const responses = load("openai-responses-schemas.json");
const responsesWidened = structuredClone(responses);
// Two widenings, both to what OpenAI's API sends and Open Responses requires
// (test/helpers/open-responses-schemas.ts), which the published schemas do not allow:
// - `usage: null` on a response in progress: the document's own examples of `response.created` and
//   `response.in_progress` (their `x-oaiMeta`) send it; the `Response` schema has only the object.
// - `description: null` in an echoed `json_schema` text format, when the request gave none: the API
//   echoes it so; `TextResponseFormatJsonSchema` types it as a string.
const responseFields = (responsesWidened.components.schemas.Response as { allOf: { properties?: Record<string, unknown> }[] }).allOf[2]!.properties!;
responseFields.usage = { anyOf: [responseFields.usage, { type: "null" }] };
const formatFields = (responsesWidened.components.schemas.TextResponseFormatJsonSchema as { properties: Record<string, unknown> }).properties;
formatFields.description = { anyOf: [formatFields.description, { type: "null" }] };

/** Validates against OpenAI's Responses API schemas as published, but for `usage: null` in progress and a `json_schema` format's `description: null`. */
export const responsesErrors = validatorOf(responsesWidened);

/** The schema of each stream event type (`response.output_text.delta` → `ResponseTextDeltaEvent`). */
const EVENT_SCHEMAS = new Map(
  (responses.components.schemas.ResponseStreamEvent as { anyOf: { $ref: string }[] }).anyOf.map(({ $ref }) => {
    const name = $ref.split("/").pop() as string;
    const type = (responses.components.schemas[name] as { properties: { type: { enum: string[] } } }).properties.type.enum[0];
    return [type, name];
  }),
);

/** Validates one stream event against the schema of its own type (a clearer report than the union's). */
export function responseEventErrors(event: { type: string }): string[] {
  const name = EVENT_SCHEMAS.get(event.type);
  return name ? responsesErrors(name, event) : [`unknown event type ${event.type}`];
}

/** Validates against OpenAI's Usage API schemas (`UsageResponse`: a page of time buckets) exactly as published. */
export const usageErrors = validatorOf(load("openai-usage-schemas.json"));
