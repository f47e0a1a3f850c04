/**
 * A request parameter asking for something the workspace cannot do (docs/architecture/dialects.md#honest-capabilities):
 * a forced call of anything but one function, a legacy `function_call`. Refused before any workspace query
 * (400, OpenAI's `invalid_request_error` naming `param`), or with `LENIENT_PARAMETERS=on` ignored
 * and named in the `service-ignored-parameters` header.
 */
export interface UnsupportedParameter {
  /** OpenAI's dotted name of the parameter: `tool_choice`, `function_call`. */
  param: string;
  /** What the workspace cannot do, and what to send instead. */
  message: string;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Whether a requested output format (`response_format` in chat completions, `text.format` in
 * Responses) asks for JSON — `json_schema` or `json_object` — rather than text: a chat UI's
 * housekeeping answered locally then replies in JSON (docs/chat-ui-tasks.md).
 */
export function asksForJson(format: unknown): boolean {
  return isObject(format) && (format.type === "json_schema" || format.type === "json_object");
}

/**
 * The problem with a `tool_choice` that forces a tool call, if any: `required`, a named function
 * (chat completions' `{type: "function", function: {name}}`, Responses' `{type: "function", name}`),
 * a named custom or hosted tool, or `allowed_tools` in `required` mode. The workspace calls no tools,
 * so `auto` and `none` (tools offered, none called) are answered as usual, the tools ignored.
 */
export function forcedToolChoice(choice: unknown, param = "tool_choice"): UnsupportedParameter | null {
  const instead = `Send ${param} 'auto' or 'none' (the tools are then ignored), or leave it out.`;
  if (choice === "required") {
    return { param, message: `This model cannot call tools: ${param} 'required' asks for a tool call it cannot make. ${instead}` };
  }
  if (!isObject(choice) || choice.type === "auto" || choice.type === "none") return null;
  if (choice.type === "allowed_tools") {
    const mode = isObject(choice.allowed_tools) ? choice.allowed_tools.mode : choice.mode;
    return mode === "required"
      ? { param, message: `This model cannot call tools: ${param} 'allowed_tools' in mode 'required' asks for a tool call it cannot make. ${instead}` }
      : null;
  }
  const named = isObject(choice.function) ? choice.function.name : isObject(choice.custom) ? choice.custom.name : choice.name;
  const what = typeof named === "string" && named ? `the ${String(choice.type ?? "tool")} '${named}'` : `a '${String(choice.type ?? "tool")}' tool`;
  return { param, message: `This model cannot call tools: ${param} names ${what}, asking for a call it cannot make. ${instead}` };
}

/** Legacy `function_call` (chat completions before tools): `{name}` forces a call; `auto` and `none` do not. */
export function forcedFunctionCall(call: unknown): UnsupportedParameter | null {
  if (!isObject(call)) return null;
  const name = typeof call.name === "string" ? ` '${call.name}'` : "";
  return {
    param: "function_call",
    message: `This model cannot call functions: function_call names the function${name}, asking for a call it cannot make. Send function_call 'auto' or 'none', or leave it out.`,
  };
}

/**
 * The function a `tool_choice` forces that the workspace can answer (docs/structured-answers.md#a-forced-function):
 * a named function (chat's `{type: "function", function: {name}}`, Responses' `{type: "function",
 * name}`), or `required` when exactly one tool, a function, is offered. Null for anything else
 * (not forced, or forced in a way that stays unsupported: see `unansweredToolChoice`).
 */
export function forcedFunction(choice: unknown, offered: { functions: readonly string[]; tools: number }): string | null {
  if (choice === "required") return offered.tools === 1 && offered.functions.length === 1 ? (offered.functions[0] as string) : null;
  if (!isObject(choice) || choice.type !== "function") return null;
  const name = isObject(choice.function) ? choice.function.name : choice.name;
  return typeof name === "string" && name !== "" ? name : null;
}

/**
 * A `tool_choice` that forces what the workspace cannot answer, once a single forced function is
 * answered as extraction: `required` with several tools (which one?), a custom or hosted tool,
 * `allowed_tools` in `required` mode.
 */
export function unansweredToolChoice(choice: unknown, offered: { functions: readonly string[]; tools: number }, param = "tool_choice"): UnsupportedParameter | null {
  if (forcedFunction(choice, offered) !== null) return null;
  if (choice === "required" && offered.tools > 1) {
    return {
      param,
      message:
        `This model cannot choose among tools: ${param} 'required' with ${offered.tools} tools asks it to pick one to call. ` +
        `Name one function in ${param}, offer only one, or send 'auto' or 'none' (the tools are then ignored).`,
    };
  }
  return forcedToolChoice(choice, param);
}
