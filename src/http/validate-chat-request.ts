import type { IncomingMessage } from "node:http";
import { RequestValidationError, type ValidationIssue } from "../errors/adapter-error.js";
import type { ChatCompletionRequest, chatCompletionRequestSchema } from "../dialects/chat-completions/chat-request.js";
import { type ModelChoice, parseModel } from "../core/model.js";
import { inspectJson } from "./inspect-json.js";
import { resolveWorkspace } from "./request-context.js";
import { toValidationIssues } from "./validation-issues.js";

/** A request that passed validation: its body, what its model names, and its workspace. */
export interface ValidChatRequest {
  body: ChatCompletionRequest;
  model: ModelChoice;
  workspace: string;
}

/**
 * Validates a chat request as a whole, header and body together, so that a 422 lists every
 * problem at once (docs/architecture.md#errors: the FastAPI `{detail: [...]}` body).
 */
export function validateChatRequest(
  request: IncomingMessage,
  body: unknown,
  schema: ReturnType<typeof chatCompletionRequestSchema>,
  defaultWorkspace: string | undefined,
  maxJsonDepth: number,
): ValidChatRequest {
  const hazards = inspectJson(body, maxJsonDepth);
  if (hazards.length > 0) throw new RequestValidationError(hazards);
  const parsed = schema.safeParse(body, { reportInput: true });
  const issues: ValidationIssue[] = parsed.success ? [] : toValidationIssues(parsed.error.issues, "body");
  const model = parsed.success ? parseModel(parsed.data.model) : undefined;
  const workspace = resolveWorkspace(request, model?.workspace, defaultWorkspace);
  if ("issue" in workspace) issues.unshift(workspace.issue);
  if (!parsed.success || !model || "issue" in workspace) throw new RequestValidationError(issues);
  return { body: parsed.data, model, workspace: workspace.workspace };
}
