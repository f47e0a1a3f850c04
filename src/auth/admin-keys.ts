import type { IncomingMessage } from "node:http";
import type { KeyEntry } from "../config/key-lists.js";
import { PermissionDeniedError } from "../errors/adapter-error.js";
import { type Account, bareAccount, namedAccount } from "./account.js";
import { bearerCredential } from "./bearer-credential.js";
import { credentialHash } from "./credential-hash.js";

/** Who may read usage: the admin behind a request, or a refusal. */
export type AdminCheck = (request: IncomingMessage) => Account;

/**
 * The guard of the usage endpoint (docs/governance.md#usage): a key of `ADMIN_API_KEYS` (looked
 * up by its hash, like every listed key) is let in; no credential is a 401, and any other one a
 * 403, a client's key included: answering and reading everyone's usage are two rights.
 */
export function adminCheck(adminKeys: readonly KeyEntry[]): AdminCheck {
  const admins = new Map(adminKeys.map((entry) => [credentialHash(entry.key), entry.name] as const));
  return (request) => {
    const hash = credentialHash(bearerCredential(request));
    if (!admins.has(hash)) {
      throw new PermissionDeniedError("This key may not read usage: only the keys of ADMIN_API_KEYS may", { code: "not_an_admin_key" });
    }
    const name = admins.get(hash);
    return name === undefined ? bareAccount(hash) : namedAccount(name);
  };
}
