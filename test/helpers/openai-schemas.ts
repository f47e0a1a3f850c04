import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv, type ValidateFunction } from "ajv";

// OpenAI's published schemas (shared/reference/openai-chat-schemas.json), compiled once. The
// message `annotations` items are widened to admit the interface's FileCitation beside OpenAI's
// url_citation, as the project brief says; nothing else is changed.
const here = dirname(fileURLToPath(import.meta.url));
const document = JSON.parse(
  readFileSync(join(here, "../../../shared/reference/openai-chat-schemas.json"), "utf8"),
) as { components: { schemas: Record<string, Record<string, unknown>> } };

/** OpenAPI 3.0's `nullable: true` (which the stream schemas still use) as JSON Schema's null type. */
function withNullables(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withNullables);
  if (typeof node !== "object" || node === null) return node;
  const { nullable, ...rest } = node as Record<string, unknown>;
  const converted = Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, withNullables(value)]));
  return nullable === true ? { anyOf: [converted, { type: "null" }] } : converted;
}
document.components = withNullables(document.components) as typeof document.components;

const schemas = document.components.schemas;
const message = schemas.ChatCompletionResponseMessage as { properties: { annotations: { items: unknown } } };
message.properties.annotations.items = {
  anyOf: [
    message.properties.annotations.items,
    {
      type: "object",
      required: ["file_citation"],
      properties: {
        type: { type: "string", enum: ["file_citation"] },
        file_citation: {
          type: "object",
          required: ["filename"],
          properties: { filename: { type: "string" } },
        },
        start_index: { type: ["integer", "null"] },
        end_index: { type: ["integer", "null"] },
      },
    },
  ],
};

const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema({ $id: "openai", components: document.components });

const compiled = new Map<string, ValidateFunction>();

/** Validates a value against one of OpenAI's schemas; returns the errors (empty when valid). */
export function openAIErrors(name: string, value: unknown): string[] {
  let validate = compiled.get(name);
  if (!validate) {
    validate = ajv.compile({ $ref: `openai#/components/schemas/${name}` });
    compiled.set(name, validate);
  }
  return validate(value)
    ? []
    : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message}`);
}
