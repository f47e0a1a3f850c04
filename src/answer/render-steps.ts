/** Separator between two rendered steps, in streamed and non-streamed reasoning alike. */
export const STEP_SEPARATOR = "\n\n";

/**
 * One step as reasoning text (docs/upstream-assumptions.md#steps; docs/architecture/upstream.md#queries `steps`): a text step is the
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

/**
 * The steps `steps[from..]` add, each rendered once: `each`, every new step as text (the ones that
 * render as nothing left out), and `text`, the delta that appends them to the reasoning of
 * `steps[..from]` (what a snapshot's new steps cost an answer is one rendering).
 */
export function renderNewSteps(steps: readonly unknown[], from: number): { text: string; each: string[] } {
  const each: string[] = [];
  for (let index = from; index < steps.length; index += 1) {
    const text = renderStep(steps[index]);
    if (text !== "") each.push(text);
  }
  if (each.length === 0) return { text: "", each };
  const after = each.join(STEP_SEPARATOR);
  return { text: anyRendered(steps, from) ? STEP_SEPARATOR + after : after, each };
}

/** Whether any of `steps[..to]` renders as something: the reasoning before them is then not empty. */
function anyRendered(steps: readonly unknown[], to: number): boolean {
  for (let index = 0; index < to && index < steps.length; index += 1) if (renderStep(steps[index]) !== "") return true;
  return false;
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
