import { hash } from "node:crypto";

/** One-way hash of a credential: what the adapter keys pollers, caches and conversations by, instead of the credential. */
export function credentialHash(credential: string): string {
  return hash("sha256", credential, "base64url");
}
