import type { SchemaNode } from "./schema-walk.js";

/**
 * What a request asks for when it wants JSON rather than prose (docs/structured-answers.md), read by
 * each dialect from its own parameters: a JSON value matching the caller's schema (`json_schema`),
 * any JSON object (`json_object`), or a forced function's arguments (`function`, whose schema is
 * the function's `parameters`).
 */
export interface StructuredRequest {
  kind: "json_schema" | "json_object" | "function";
  /** The schema's or the function's name, as the client gave it. */
  name: string | null;
  /** The schema's or the function's description, as the client gave it. */
  description: string | null;
  /** The caller's schema (`json_schema`, `function`); null for `json_object`. */
  schema: SchemaNode | null;
  /** The request parameter that asked (`response_format`, `text.format`, `tool_choice`): named by a 400. */
  param: string;
}

/** The schema an answer to `request` is validated against: the caller's, or any object for `json_object`. */
export function validationSchemaOf(request: StructuredRequest): SchemaNode {
  return request.schema ?? { type: "object" };
}
