import { InvalidRequestError, ServiceUnavailableError } from "../errors/adapter-error.js";
import type { SchemaProblem } from "../structured/schema-bounds.js";
import { isSchemaNode, type SchemaNode } from "../structured/schema-walk.js";
import type { StructuredRequest } from "../structured/structured-request.js";

/** Checks a caller's schema (`SchemaValidation.check`, which keeps the verdict by the schema's hash). */
export type SchemaCheck = (schema: SchemaNode) => SchemaProblem | null;

/** Checks a caller's schema where the adapter checks them (`SchemaService.check`: on the schema worker). */
export type AsyncSchemaCheck = (schema: SchemaNode) => Promise<SchemaProblem | null>;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const text = (value: unknown): string | null => (typeof value === "string" && value !== "" ? value : null);

/** A function the request offers: its name, description and `parameters` schema, as a dialect reads them. */
export interface OfferedFunction {
  name: string;
  description: string | null;
  parameters: unknown;
}

/**
 * The caller's schema, checked as untrusted input (docs/structured-answers.md#the-schema-is-untrusted);
 * a schema that is not an object, or (with `check`) one the adapter will not take on, is a 400
 * naming `param` with the place in the schema and what is wrong there, before anything is asked of
 * the workspace.
 */
function checkedSchema(schema: unknown, param: string, name: string | null, check: SchemaCheck | undefined): SchemaNode {
  if (!isSchemaNode(schema)) throw new InvalidRequestError(`Invalid schema for ${schemaParameter(param, name)}: the schema must be a JSON object.`, { param, code: "invalid_json_schema" });
  refuseProblem(check?.(schema) ?? null, param, name);
  return schema;
}

/** The parameter a schema came in, as a 400 names it (`tools 'lookup'`). */
function schemaParameter(param: string, name: string | null): string {
  return `${param}${name ? ` '${name}'` : ""}`;
}

/** A problem the check found, as the 400 that names the parameter, the place in the schema and what is wrong there. */
function refuseProblem(problem: SchemaProblem | null, param: string, name: string | null): void {
  if (!problem) return;
  if (problem.busy) throw new ServiceUnavailableError(problem.message, { param, headers: { "retry-after": "1" } });
  const where = problem.pointer === "" ? "the schema" : `the schema at ${problem.pointer}`;
  throw new InvalidRequestError(`Invalid schema for ${schemaParameter(param, name)}: ${where} ${problem.message}.`, { param, code: "invalid_json_schema" });
}

/**
 * Checks the schema of a structured request read without a check (a 400 as `checkedSchema`'s):
 * the routes read what is asked before admission and check the schema after it, so that the
 * limits count a request whose schema is refused (docs/structured-answers.md#the-schema-is-untrusted).
 * A forced function's schema is its `parameters`, named `tools`.
 */
export async function checkStructuredSchema(structured: StructuredRequest | null, check: AsyncSchemaCheck): Promise<void> {
  if (!structured?.schema) return;
  refuseProblem(await check(structured.schema), structured.kind === "function" ? "tools" : structured.param, structured.name);
}

/**
 * The structured answer a requested format asks for (chat `response_format`, Responses
 * `text.format`): `json_schema` with its schema (checked, given `check`), `json_object`; null for `text`, absence and
 * types the adapter does not know (answered in prose, as before).
 */
export function formatRequest(
  format: unknown,
  param: string,
  check: SchemaCheck | undefined,
  readSchema: (format: Record<string, unknown>) => { name: unknown; description: unknown; schema: unknown },
): StructuredRequest | null {
  if (!isObject(format)) return null;
  if (format.type === "json_object") return { kind: "json_object", name: null, description: null, schema: null, param };
  if (format.type !== "json_schema") return null;
  const read = readSchema(format);
  const name = text(read.name);
  const schema = read.schema === undefined || read.schema === null ? null : checkedSchema(read.schema, param, name, check);
  return { kind: "json_schema", name, description: text(read.description), schema, param };
}

/**
 * The structured answer a forced function asks for (docs/structured-answers.md#a-forced-function):
 * its arguments, validated against its `parameters`. `forced` is the function's name (from
 * `tool_choice`, or the one tool offered under `required`); a name no offered function has is a 400.
 */
function functionRequest(
  forced: string,
  offered: readonly OfferedFunction[],
  param: string,
  check: SchemaCheck | undefined,
): StructuredRequest {
  const tool = offered.find((candidate) => candidate.name === forced);
  if (!tool) {
    throw new InvalidRequestError(`${param} names the function '${forced}', which is not among the tools offered.`, { param, code: "invalid_value" });
  }
  const parameters = tool.parameters ?? { type: "object", properties: {} };
  return { kind: "function", name: tool.name, description: tool.description, schema: checkedSchema(parameters, "tools", tool.name, check), param };
}

/** A 400 for a request that asks for both a JSON format and a forced function: one answer cannot be both. */
function bothAsked(formatParam: string): InvalidRequestError {
  return new InvalidRequestError(
    `Ask for one structured answer: ${formatParam} asks for JSON content and tool_choice forces a function call; send one of them.`,
    { param: "tool_choice", code: "invalid_value" },
  );
}

/**
 * A 400 for a forced function in a conversation whose last turn is a tool's result
 * (docs/structured-answers.md#a-forced-function): the workspace fills a function's arguments from
 * its documents (extraction); it never sees what a tool returned, so it cannot act on it.
 */
function resultNotActedOn(param: string): InvalidRequestError {
  return new InvalidRequestError(
    "This model fills a forced function's arguments from the workspace's documents; it cannot act on a tool's result, " +
      `and the last ${param === "input" ? "input item" : "message"} is one. Ask for the call in a new user turn, or send tool_choice 'auto'.`,
    { param, code: "invalid_value" },
  );
}

/** What a dialect reads of its request for `structuredRequestOf`. */
export interface StructuredParameters {
  /** The structured answer its format asks for (`formatRequest`), or null. */
  format: StructuredRequest | null;
  /** The parameter that carries the format (`response_format`, `text.format`). */
  formatParam: string;
  /** The function `tool_choice` forces that the workspace can answer (`forcedFunction`), or null. */
  forced: string | null;
  /** The functions offered. */
  offered: readonly OfferedFunction[];
  /** Where the conversation is (`messages`, `input`), and whether its last turn is a tool's result. */
  conversationParam: string;
  endsWithToolResult: boolean;
}

/**
 * What a request asks in structure, from what its dialect read (docs/structured-answers.md): its
 * format, or its forced function (with its parameters checked, given `check`; else
 * `checkStructuredSchema` checks it later); a 400 for both at once, and for a forced function after
 * a tool's result.
 */
export function structuredRequestOf(read: StructuredParameters, check?: SchemaCheck): StructuredRequest | null {
  if (read.forced === null) return read.format;
  if (read.format) throw bothAsked(read.formatParam);
  if (read.endsWithToolResult) throw resultNotActedOn(read.conversationParam);
  return functionRequest(read.forced, read.offered, "tool_choice", check);
}

export { isObject as isParameterObject, text as nonEmptyText };
