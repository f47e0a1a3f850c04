import { hash } from "node:crypto";

/**
 * One-way hash of a credential: what the adapter keys pollers, caches, conversations and Redis
 * entries by, instead of the credential itself. Stateless: a SHA-256 of a key is cheap enough
 * that a cache would not pay for its bookkeeping.
 */
export function credentialHash(credential: string): string {
  return hash("sha256", credential, "base64url");
}
