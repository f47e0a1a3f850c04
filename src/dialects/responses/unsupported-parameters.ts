import { asksForJson, forcedToolChoice, unansweredToolChoice, type UnsupportedParameter } from "../unsupported-parameter.js";

const formatOf = (text: unknown): unknown => (typeof text === "object" && text !== null ? (text as { format?: unknown }).format : undefined);

/** Whether the request forces a tool call (what a local reply, being text, cannot answer). */
export function forcesResponseToolCall(body: Readonly<Record<string, unknown>>): boolean {
  return forcedToolChoice(body.tool_choice) !== null;
}

/** Whether the request asks for JSON (`text.format` `json_schema` or `json_object`). */
export function asksResponseJson(body: Readonly<Record<string, unknown>>): boolean {
  return asksForJson(formatOf(body.text));
}

/** The functions a Responses request offers (`tools` of type `function`), by name, and how many tools in all. */
export function responseOfferedTools(body: Readonly<Record<string, unknown>>): { functions: string[]; tools: number } {
  const tools = Array.isArray(body.tools) ? (body.tools as unknown[]) : [];
  const functions = tools.flatMap((tool) => {
    const definition = typeof tool === "object" && tool !== null ? (tool as { type?: unknown; name?: unknown }) : {};
    return definition.type === "function" && typeof definition.name === "string" ? [definition.name] : [];
  });
  return { functions, tools: tools.length };
}

/**
 * What a Responses request asks that the workspace cannot do (docs/architecture/dialects.md#honest-capabilities;
 * docs/structured-answers.md): a `tool_choice` forcing anything but one function.
 */
export function unansweredResponseParameters(body: Readonly<Record<string, unknown>>): UnsupportedParameter[] {
  const tool = unansweredToolChoice(body.tool_choice, responseOfferedTools(body));
  return tool ? [tool] : [];
}
