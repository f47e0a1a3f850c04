import type { IncomingMessage } from "node:http";
import { ID_MESSAGE, ID_PATTERN } from "../core/ids.js";
import type { ValidationIssue } from "../errors/adapter-error.js";

/**
 * The workspace of a request (docs/architecture.md#workspace-selection): the `Service-Workspace` header,
 * else the workspace named in the model (`<workspace>/ask`), else the configured default.
 * Returns the workspace, or the 422 issue that explains why there is none.
 */
export function resolveWorkspace(
  request: IncomingMessage,
  fromModel: string | undefined,
  defaultWorkspace: string | undefined,
): { workspace: string } | { issue: ValidationIssue } {
  const header = request.headers["service-workspace"];
  const value = Array.isArray(header) ? header[0] : header;
  if (value !== undefined && value !== "") {
    if (!ID_PATTERN.test(value)) {
      return {
        issue: {
          loc: ["header", "service-workspace"],
          msg: ID_MESSAGE,
          type: "string_pattern_mismatch",
          input: value,
          ctx: { pattern: ID_PATTERN.source },
        },
      };
    }
    return { workspace: value };
  }
  const workspace = fromModel ?? defaultWorkspace;
  if (workspace) return { workspace };
  return {
    issue: {
      loc: ["header", "service-workspace"],
      msg: "Field required: send a Service-Workspace header, or name the workspace in the model ('<workspace>/ask')",
      type: "missing",
    },
  };
}

/**
 * The workspace a request names in its `Service-Workspace` header, if any: what a stored object's
 * lookup is narrowed to (docs/responses-api.md), where none named means any of the caller's.
 */
export function namedWorkspace(request: IncomingMessage): string | undefined {
  const header = request.headers["service-workspace"];
  return typeof header === "string" && header !== "" ? header : undefined;
}
