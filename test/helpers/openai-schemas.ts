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
