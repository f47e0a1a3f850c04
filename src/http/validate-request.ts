import type { IncomingMessage } from "node:http";
import type { z } from "zod";
import { type ModelChoice, parseModel } from "../core/model.js";
import { RequestValidationError, type ValidationIssue } from "../errors/adapter-error.js";
import { inspectJson } from "./inspect-json.js";
import { resolveWorkspace } from "./resolve-workspace.js";
import { toValidationIssues } from "./validation-issues.js";

/** A request that passed validation: its body, what its model names, and its workspace. */
export interface ValidRequest<Body> {
  body: Body;
  model: ModelChoice;
  workspace: string;
}

/**
 * Validates an answer request of any dialect as a whole, header and body together, so that a 422
 * lists every problem at once (docs/architecture.md#errors: the FastAPI `{detail: [...]}` body):
 * hazards in the JSON first, then the dialect's schema, then the workspace
 * (docs/architecture.md#workspace-selection).
 */
export function validateRequest<Schema extends z.ZodType<{ model: string }>>(
  request: IncomingMessage,
  body: unknown,
  schema: Schema,
  defaultWorkspace: string | undefined,
  maxJsonDepth: number,
): ValidRequest<z.output<Schema>> {
  const hazards = inspectJson(body, maxJsonDepth);
  if (hazards.length > 0) throw new RequestValidationError(hazards);
  const parsed = schema.safeParse(body, { reportInput: true });
  const issues: ValidationIssue[] = parsed.success ? [] : toValidationIssues(parsed.error.issues, "body");
  const model = parsed.success ? parseModel(parsed.data.model) : null;
  const workspace = resolveWorkspace(request, model?.workspace, defaultWorkspace);
  if ("issue" in workspace) issues.unshift(workspace.issue);
  if (!parsed.success || !model || "issue" in workspace) throw new RequestValidationError(issues);
  return { body: parsed.data, model, workspace: workspace.workspace };
}
