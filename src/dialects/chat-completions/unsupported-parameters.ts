import { asksForJson, forcedFunctionCall, forcedToolChoice, unansweredToolChoice, type UnsupportedParameter } from "../unsupported-parameter.js";

/** Whether the request forces a tool or function call (what a local reply, being text, cannot answer). */
export function forcesChatToolCall(body: Readonly<Record<string, unknown>>): boolean {
  return forcedToolChoice(body.tool_choice) !== null || forcedFunctionCall(body.function_call) !== null;
}

/** Whether the request asks for JSON (`response_format` `json_schema` or `json_object`). */
export function asksChatJson(body: Readonly<Record<string, unknown>>): boolean {
  return asksForJson(body.response_format);
}

/** The functions a chat request offers (`tools` of type `function`), by name, and how many tools in all. */
export function chatOfferedTools(body: Readonly<Record<string, unknown>>): { functions: string[]; tools: number } {
  const tools = Array.isArray(body.tools) ? (body.tools as unknown[]) : [];
  const functions = tools.flatMap((tool) => {
    const definition = typeof tool === "object" && tool !== null ? (tool as { type?: unknown; function?: { name?: unknown } }) : {};
    return definition.type === "function" && typeof definition.function?.name === "string" ? [definition.function.name] : [];
  });
  return { functions, tools: tools.length };
}

/**
 * What a chat completion request asks that the workspace cannot do (docs/architecture/dialects.md#honest-capabilities;
 * docs/structured-answers.md): a `tool_choice` forcing anything but one function, a
 * legacy `function_call` naming a function. JSON formats and a single forced function are answered.
 */
export function unansweredChatParameters(body: Readonly<Record<string, unknown>>): UnsupportedParameter[] {
  const found: UnsupportedParameter[] = [];
  const tool = unansweredToolChoice(body.tool_choice, chatOfferedTools(body));
  if (tool) found.push(tool);
  const call = forcedFunctionCall(body.function_call);
  if (call) found.push(call);
  return found;
}
