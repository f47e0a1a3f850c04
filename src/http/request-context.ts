import type { IncomingMessage } from "node:http";
import { AuthenticationError, type ValidationIssue } from "../errors/adapter-error.js";

/** Workspace ids the adapter forwards: letters, digits and `._:-`, at most 128 (always a valid header value). */
export const WORKSPACE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/**
 * The bearer credential of a request (§ Authentication 1). Missing, empty or of another scheme
 * gives 401 `{detail}`; the credential itself never appears in an error.
 */
export function bearerCredential(request: IncomingMessage): string {
  const header = request.headers.authorization;
  // Greedy, then trimmed: a lazy credential before `\s*$` backtracked quadratically over a long
  // header (16 KB of spaces cost 0.2 s per request, before authentication).
  const credential = header ? /^Bearer[ \t]+(\S[^\r\n]*)$/i.exec(header)?.[1]?.trimEnd() : undefined;
  if (!credential) throw new AuthenticationError("Not authenticated");
  // A credential that could not be sent on as a header value is as good as no credential.
  if (!/^[\x21-\x7e]+$/.test(credential)) throw new AuthenticationError("Invalid authentication credentials");
  return credential;
}

/**
 * The workspace of a request (DESIGN.md, Workspace selection): the `Service-Workspace` header,
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
    if (!WORKSPACE_ID.test(value)) {
      return {
        issue: {
          loc: ["header", "service-workspace"],
          msg: "String should match pattern '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$'",
          type: "string_pattern_mismatch",
          input: value,
          ctx: { pattern: WORKSPACE_ID.source },
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
