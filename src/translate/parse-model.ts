import type { Mode } from "../config/config.js";
import { MODEL_PATTERN } from "../openai/chat-request.js";

/** What a `model` names: the interaction mode, and a workspace when written `<workspace>/<mode>`. */
export interface ModelChoice {
  mode: Mode;
  workspace: string | undefined;
}

/** Reads a validated `model` (§ Chat completion rules, 2; DESIGN.md, workspace selection). */
export function parseModel(model: string): ModelChoice {
  const match = MODEL_PATTERN.exec(model);
  if (!match) throw new Error(`parseModel called with an unvalidated model: ${model}`);
  return { workspace: match[1], mode: match[2] as Mode };
}
