/** Separator between two rendered steps, in streamed and non-streamed reasoning alike. */
export const STEP_SEPARATOR = "\n\n";

/**
 * One step as reasoning text (docs/upstream-assumptions.md#steps; docs/architecture.md#queries `steps`): a text step is the
 * assistant's intermediate message; a tool step becomes one short line naming the tool (its
 * arguments and outputs are not in the interface). Unknown shapes render as nothing.
 */
export function renderStep(step: unknown): string {
  if (typeof step === "string") return step;
  if (typeof step !== "object" || step === null) return "";
  const record = step as Record<string, unknown>;
  if (typeof record.text === "string") return record.text;
  if ("tool" in record) return `Using tool: ${toolName(record.tool)}`;
  return "";
}

/** The reasoning text of a list of steps; equal to the concatenation of streamed step deltas. */
export function renderSteps(steps: readonly unknown[]): string {
  return steps
    .map(renderStep)
    .filter((text) => text !== "")
    .join(STEP_SEPARATOR);
}

/** Each step of `steps[from..]` as text, the ones that render as nothing left out. */
export function renderEachStep(steps: readonly unknown[], from: number): string[] {
  return steps
    .slice(from)
    .map(renderStep)
    .filter((text) => text !== "");
}

/** The delta that appends `steps[from..]` to the reasoning of `steps[..from]`. */
export function renderStepsDelta(steps: readonly unknown[], from: number): string {
  const before = renderSteps(steps.slice(0, from));
  const after = renderSteps(steps.slice(from));
  if (after === "") return "";
  return before === "" ? after : STEP_SEPARATOR + after;
}

function toolName(tool: unknown): string {
  if (typeof tool === "string" && tool.trim()) return tool.trim();
  if (typeof tool === "object" && tool !== null) {
    const record = tool as Record<string, unknown>;
    for (const key of ["name", "tool_name", "type", "id"]) {
      const value = record[key];
      if (typeof value === "string" && value.trim()) return value.trim();
    }
  }
  return "tool";
}
