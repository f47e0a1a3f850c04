import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";

/** The keys derived from one secret of the ring. */
interface RingKey {
  secret: string;
  /** Names the secret in what it sealed (not secret: an HMAC under a key of its own). */
  id: string;
  sealing: Buffer;
  signing: Buffer;
}

const derive = (secret: string, purpose: string, length = 32) =>
  Buffer.from(hkdfSync("sha256", secret, "workspace-openai-adapter oauth", purpose, length));

/**
 * The OAuth server's keys, all derived from `OAUTH_SECRET` with HKDF so that each use has its own
 * key: the workspace keys behind grants are sealed with AES-256-GCM, bound to their grant (a sealed
 * key moved to another grant does not open); the consent page's CSRF tokens are HMACs. A keyring:
 * the first secret seals and signs; every secret opens and verifies, so a new secret can be put
 * first while grants sealed under the old one keep working (docs/mcp-oauth.md#rotating-oauth_secret).
 * Nothing here is stored: the same secrets give the same keys on every replica.
 */
export class SecretBox {
  private readonly ring: RingKey[];

  constructor(secrets: string | readonly string[]) {
    const list = typeof secrets === "string" ? [secrets] : secrets;
    if (list.length === 0) throw new Error("a SecretBox needs at least one secret");
    this.ring = list.map((secret) => ({
      secret,
      id: createHmac("sha256", derive(secret, "key-id")).update("key-id").digest("base64url").slice(0, 8),
      sealing: derive(secret, "grant-sealing"),
      signing: derive(secret, "consent-signing"),
    }));
  }

  private get current(): RingKey {
    return this.ring[0] as RingKey;
  }

  /** A key of its own for one purpose (of the current secret). */
  derive(purpose: string, length = 32): Buffer {
    return derive(this.current.secret, purpose, length);
  }

  /** The same purpose's key under every secret of the ring, the current one first (cookie keys, signing keys). */
  deriveAll(purpose: string, length = 32): Buffer[] {
    return this.ring.map((key) => derive(key.secret, purpose, length));
  }

  /** `plain` encrypted and authenticated for `context` (a grant id): `v2.<key id>.<iv>.<ciphertext+tag>`. */
  seal(plain: string, context: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.current.sealing, iv);
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final(), cipher.getAuthTag()]);
    return `v2.${this.current.id}.${iv.toString("base64url")}.${body.toString("base64url")}`;
  }

  /** What `seal` sealed for the same context, or undefined (altered, another context, a secret no longer in the ring). */
  open(sealed: string, context: string): string | undefined {
    const parts = sealed.split(".");
    // v1 (no key id) was sealed under the secret of its time: tried with each.
    const [candidates, iv, body] = parts[0] === "v2" && parts.length === 4
      ? [this.ring.filter((key) => key.id === parts[1]), parts[2], parts[3]]
      : parts[0] === "v1" && parts.length === 3
        ? [this.ring, parts[1], parts[2]]
        : [[], undefined, undefined];
    if (!iv || !body) return undefined;
    for (const key of candidates) {
      const opened = openWith(key.sealing, iv, body, context);
      if (opened !== undefined) return opened;
    }
    return undefined;
  }

  /** An HMAC of `parts` under the current secret (the consent form's CSRF token, the account id of a key). */
  sign(...parts: string[]): string {
    return hmac(this.current.signing, parts);
  }

  /** Whether `token` is `sign(...parts)` under any secret of the ring, compared in constant time. */
  verify(token: string, ...parts: string[]): boolean {
    const given = Buffer.from(token);
    let match = false;
    for (const key of this.ring) {
      const expected = Buffer.from(hmac(key.signing, parts));
      match = (given.length === expected.length && timingSafeEqual(given, expected)) || match;
    }
    return match;
  }
}

function hmac(key: Buffer, parts: string[]): string {
  return createHmac("sha256", key).update(parts.join("\n")).digest("base64url");
}

function openWith(key: Buffer, iv: string, body: string, context: string): string | undefined {
  try {
    const data = Buffer.from(body, "base64url");
    if (data.length < 16) return undefined;
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(data.subarray(data.length - 16));
    return Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]).toString("utf8");
  } catch {
    return undefined;
  }
}
