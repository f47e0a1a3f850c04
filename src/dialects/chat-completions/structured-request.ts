import type { StructuredRequest } from "../../structured/structured-request.js";
import { formatRequest, isParameterObject, nonEmptyText, type OfferedFunction, type SchemaCheck, structuredRequestOf } from "../structured-parameters.js";
import { forcedFunction } from "../unsupported-parameter.js";
import type { ChatEncoding } from "./chat-choice.js";
import { chatOfferedTools } from "./unsupported-parameters.js";

/** The functions of a chat request's `tools`: `{type: "function", function: {name, description, parameters}}`. */
function offeredFunctions(tools: unknown): OfferedFunction[] {
  if (!Array.isArray(tools)) return [];
  return tools.flatMap((tool) => {
    if (!isParameterObject(tool) || tool.type !== "function" || !isParameterObject(tool.function)) return [];
    const { name, description, parameters } = tool.function;
    return typeof name === "string" ? [{ name, description: nonEmptyText(description), parameters }] : [];
  });
}

/**
 * What a chat completion request asks in structure (docs/structured-answers.md), or null for prose:
 * `response_format` `json_schema` (`{json_schema: {name, description, schema}}`) or `json_object`,
 * or a forced single function (`tool_choice` naming it, or `required` with one tool offered). The
 * schema is checked when `check` is given (else `checkStructuredSchema` does, after admission) and
 * a problem is a 400 naming the parameter; so are a format and a
 * forced function together, and a forced function after a tool's result (`role: "tool"`).
 */
export function readChatStructured(body: Readonly<Record<string, unknown>>, check?: SchemaCheck): StructuredRequest | null {
  const format = formatRequest(body.response_format, "response_format", check, (value) => {
    const described = isParameterObject(value.json_schema) ? value.json_schema : {};
    return { name: described.name, description: described.description, schema: described.schema };
  });
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const last: unknown = messages.at(-1);
  return structuredRequestOf(
    {
      format,
      formatParam: "response_format",
      forced: forcedFunction(body.tool_choice, chatOfferedTools(body)),
      offered: offeredFunctions(body.tools),
      conversationParam: "messages",
      endsWithToolResult: isParameterObject(last) && (last.role === "tool" || last.role === "function"),
    },
    check,
  );
}

/**
 * The chat encoding of a structured answer (docs/structured-answers.md#what-comes-back): the content
 * is the JSON alone, so citations stay annotations (no Markdown links or Sources list written into
 * it) and steps go to `reasoning_content` even where the deployment puts them in the content; a
 * forced function's answer is its call (`call_` and the query id).
 */
export function structuredEncoding(encoding: ChatEncoding, structured: StructuredRequest | null, queryId: string): ChatEncoding {
  if (!structured) return encoding;
  const stepsOutput = encoding.stepsOutput === "content" ? "reasoning" : encoding.stepsOutput;
  const call = structured.kind === "function" ? { id: `call_${queryId}`, name: structured.name ?? "" } : undefined;
  return { ...encoding, citationStyle: "annotations", stepsOutput, call };
}
