import { forcedToolChoice, type UnsupportedParameter, unsupportedFormat } from "../unsupported-parameter.js";

const formatOf = (text: unknown): unknown => (typeof text === "object" && text !== null ? (text as { format?: unknown }).format : undefined);

/**
 * What a Responses request asks that the workspace cannot do (docs/architecture.md#honest-capabilities):
 * `text.format` `json_schema` or `json_object`, a `tool_choice` that forces a tool call. Empty for
 * everything else (tools offered with `auto` or `none`, sampling parameters).
 */
export function unsupportedResponseParameters(body: Readonly<Record<string, unknown>>): UnsupportedParameter[] {
  const found: UnsupportedParameter[] = [];
  const format = unsupportedFormat(formatOf(body.text), "text.format", '{"type": "text"}');
  if (format) found.push(format);
  const tool = forcedToolChoice(body.tool_choice);
  if (tool) found.push(tool);
  return found;
}

/** Whether the request forces a tool call (what a local reply, being text, cannot answer). */
export function forcesResponseToolCall(body: Readonly<Record<string, unknown>>): boolean {
  return forcedToolChoice(body.tool_choice) !== null;
}

/** Whether the request asks for JSON (`text.format` `json_schema` or `json_object`). */
export function asksResponseJson(body: Readonly<Record<string, unknown>>): boolean {
  return unsupportedFormat(formatOf(body.text), "text.format", "") !== null;
}
