import { forcedFunctionCall, forcedToolChoice, type UnsupportedParameter, unsupportedFormat } from "../unsupported-parameter.js";

/**
 * What a chat completion request asks that the workspace cannot do (docs/architecture.md#honest-capabilities):
 * `response_format` `json_schema` or `json_object`, a `tool_choice` that forces a tool call, a legacy
 * `function_call` naming a function. Empty for everything else, tools offered with `auto` or `none`
 * and the sampling parameters included: those are accepted and have no effect.
 */
export function unsupportedChatParameters(body: Readonly<Record<string, unknown>>): UnsupportedParameter[] {
  const found: UnsupportedParameter[] = [];
  const format = unsupportedFormat(body.response_format, "response_format", '{"type": "text"}');
  if (format) found.push(format);
  const tool = forcedToolChoice(body.tool_choice);
  if (tool) found.push(tool);
  const call = forcedFunctionCall(body.function_call);
  if (call) found.push(call);
  return found;
}

/** Whether the request forces a tool or function call (what a local reply, being text, cannot answer). */
export function forcesChatToolCall(body: Readonly<Record<string, unknown>>): boolean {
  return forcedToolChoice(body.tool_choice) !== null || forcedFunctionCall(body.function_call) !== null;
}

/** Whether the request asks for JSON (`response_format` `json_schema` or `json_object`). */
export function asksChatJson(body: Readonly<Record<string, unknown>>): boolean {
  return unsupportedFormat(body.response_format, "response_format", "") !== null;
}
