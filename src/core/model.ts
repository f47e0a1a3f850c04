import { ID_SOURCE } from "./ids.js";
import { type Mode, MODES } from "./modes.js";

/** `<workspace>/<mode>` or a bare mode (docs/architecture.md#workspace-selection). */
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
