import type { IncomingMessage } from "node:http";
import { AuthenticationError } from "../errors/adapter-error.js";

/**
 * The bearer credential of a request (docs/architecture/upstream.md#authentication-and-workspaces). Missing, empty or of another scheme
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
