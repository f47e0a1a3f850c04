import { hash } from "node:crypto";

// Recent credentials' hashes: a client sends the same key with every request. Bounded, and
// emptied when full, so it cannot grow with the number of keys tried.
const recent = new Map<string, string>();
const MAX_REMEMBERED = 1024;

/** One-way hash of a credential: what the adapter keys pollers, caches and conversations by, instead of the credential. */
export function credentialHash(credential: string): string {
  let hashed = recent.get(credential);
  if (hashed === undefined) {
    hashed = hash("sha256", credential, "base64url");
    if (recent.size >= MAX_REMEMBERED) recent.clear();
    recent.set(credential, hashed);
  }
  return hashed;
}
