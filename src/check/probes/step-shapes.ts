import { renderStep } from "../../answer/render-steps.js";
import { type CheckLine, checkLine } from "../check-report.js";
import { shapeOf } from "./channel-observer.js";
import { finalOf, type QueryRun } from "./query-runs.js";

const TOOL_PREFIX = "Using tool: ";

/**
 * The shapes of steps (docs/upstream-assumptions.md#steps), read as the adapter renders them
 * (render-steps.ts): a text step `{text}`, a tool step `{tool}` whose name is the tool itself or its
 * `name`, `tool_name`, `type` or `id`. A step the adapter would render as nothing is dropped from
 * every answer's reasoning: that fails, naming the shapes seen.
 */
export function stepsLine(runs: readonly QueryRun[]): CheckLine {
  let text = 0;
  let unnamed = 0;
  const tools = new Set<string>();
  const dropped = new Map<string, number>();
  let total = 0;
  for (const run of runs) {
    for (const step of finalOf(run)?.steps ?? []) {
      total += 1;
      const rendered = renderStep(step);
      if (rendered === "") dropped.set(shapeOf(step), (dropped.get(shapeOf(step)) ?? 0) + 1);
      else if (typeof step === "object" && step !== null && "tool" in step && rendered.startsWith(TOOL_PREFIX)) {
        const name = rendered.slice(TOOL_PREFIX.length);
        if (name === "tool") unnamed += 1;
        else tools.add(name);
      } else text += 1;
    }
  }
  if (total === 0) return checkLine("steps", "warn", "no answer had steps: nothing to read (the answers will show no reasoning)");
  const droppedCount = [...dropped.values()].reduce((sum, count) => sum + count, 0);
  if (droppedCount > 0) {
    const shapes = [...dropped].map(([shape, count]) => `${shape}${count > 1 ? ` ×${count}` : ""}`).join(", ");
    return checkLine("steps", "fail", `${droppedCount} of ${total} steps have shapes the adapter does not read and would drop from the reasoning: ${shapes} (it reads {text} and {tool})`);
  }
  const toolCount = total - text;
  const read = `${total} steps read: ${text} text, ${toolCount} tool${tools.size > 0 ? ` (${[...tools].join(", ")})` : ""}; none dropped`;
  if (unnamed > 0) return checkLine("steps", "warn", `${read}, but ${unnamed} tool step${unnamed === 1 ? " names" : "s name"} no tool the adapter can read (shown as "Using tool: tool")`);
  return checkLine("steps", "pass", read);
}
