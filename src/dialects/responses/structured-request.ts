import type { StructuredRequest } from "../../structured/structured-request.js";
import { formatRequest, isParameterObject, nonEmptyText, type OfferedFunction, type SchemaCheck, structuredRequestOf } from "../structured-parameters.js";
import { forcedFunction } from "../unsupported-parameter.js";
import { responseOfferedTools } from "./unsupported-parameters.js";

/** The functions of a Responses request's `tools`: `{type: "function", name, description, parameters}`. */
function offeredFunctions(tools: unknown): OfferedFunction[] {
  if (!Array.isArray(tools)) return [];
  return tools.flatMap((tool) => {
    if (!isParameterObject(tool) || tool.type !== "function" || typeof tool.name !== "string") return [];
    return [{ name: tool.name, description: nonEmptyText(tool.description), parameters: tool.parameters }];
  });
}

/**
 * What a Responses request asks in structure (docs/structured-answers.md), or null for prose:
 * `text.format` `json_schema` (`{name, description, schema}`) or `json_object`, or a forced single
 * function (`tool_choice` naming it, or `required` with one tool offered). The schema is checked
 * when `check` is given (else `checkStructuredSchema` does, after admission) and a problem is a 400
 * naming the parameter; so are a format and a forced function together, and a forced function after a tool's result (a `function_call_output` item last).
 */
export function readResponseStructured(body: Readonly<Record<string, unknown>>, check?: SchemaCheck): StructuredRequest | null {
  const text = isParameterObject(body.text) ? body.text : {};
  const format = formatRequest(text.format, "text.format", check, (value) => ({ name: value.name, description: value.description, schema: value.schema }));
  const last: unknown = Array.isArray(body.input) ? body.input.at(-1) : undefined;
  return structuredRequestOf(
    {
      format,
      formatParam: "text.format",
      forced: forcedFunction(body.tool_choice, responseOfferedTools(body)),
      offered: offeredFunctions(body.tools),
      conversationParam: "input",
      endsWithToolResult: isParameterObject(last) && (last.type === "function_call_output" || last.type === "custom_tool_call_output"),
    },
    check,
  );
}
