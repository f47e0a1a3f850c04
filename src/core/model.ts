import { z } from "zod";
import { ID_SOURCE } from "./ids.js";
import { type Mode, MODES, QUOTED_MODES } from "./modes.js";

/** `<workspace>/<mode>` or a bare mode (docs/architecture/edge.md#workspace-selection). */
export const MODEL_PATTERN = new RegExp(`^(?:(${ID_SOURCE})/)?(${MODES.join("|")})$`);

/** What a `model` names: the interaction mode, and a workspace when written `<workspace>/<mode>`. */
export interface ModelChoice {
  mode: Mode;
  workspace: string | undefined;
}

/** Reads a `model`; null when it names no mode. */
export function parseModel(model: string): ModelChoice | null {
  const match = MODEL_PATTERN.exec(model);
  if (!match) return null;
  return { workspace: match[1], mode: match[2] as Mode };
}

/** The `model` of an answer request in any dialect: a mode, or `<workspace>/<mode>`; a 422 `literal_error` otherwise. */
export const modelSchema = z.string().check((context) => {
  if (!MODEL_PATTERN.test(context.value)) {
    context.issues.push({
      code: "custom",
      input: context.value,
      message: `Input should be ${QUOTED_MODES} or '<workspace>/<mode>'`,
      params: { type: "literal_error", ctx: { expected: "'ask', 'reason' or 'build'" } },
    });
  }
});
