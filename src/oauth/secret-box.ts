import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * The OAuth server's keys, all derived from one secret (`OAUTH_SECRET`) with HKDF so that each
 * use has its own key: the workspace keys behind grants are sealed with AES-256-GCM, bound to
 * their grant (a sealed key moved to another grant does not open); the consent page's CSRF tokens
 * are HMACs. Nothing here is stored: the same secret gives the same keys on every replica.
 */
export class SecretBox {
  private readonly sealing: Buffer;
  private readonly signing: Buffer;

  constructor(private readonly secret: string) {
    this.sealing = this.derive("grant-sealing");
    this.signing = this.derive("consent-signing");
  }

  /** A key of its own for one purpose (cookie keys of the authorization server, …). */
  derive(purpose: string, length = 32): Buffer {
    return Buffer.from(hkdfSync("sha256", this.secret, "workspace-openai-adapter oauth", purpose, length));
  }

  /** `plain` encrypted and authenticated for `context` (a grant id): `v1.<iv>.<ciphertext+tag>`. */
  seal(plain: string, context: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.sealing, iv);
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final(), cipher.getAuthTag()]);
    return `v1.${iv.toString("base64url")}.${body.toString("base64url")}`;
  }

  /** What `seal` sealed for the same context, or undefined (altered, another context, another secret). */
  open(sealed: string, context: string): string | undefined {
    const [version, iv, body] = sealed.split(".");
    if (version !== "v1" || !iv || !body) return undefined;
    try {
      const data = Buffer.from(body, "base64url");
      if (data.length < 16) return undefined;
      const decipher = createDecipheriv("aes-256-gcm", this.sealing, Buffer.from(iv, "base64url"));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(data.subarray(data.length - 16));
      return Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]).toString("utf8");
    } catch {
      return undefined;
    }
  }

  /** An HMAC of `parts` (the consent form's CSRF token). */
  sign(...parts: string[]): string {
    return createHmac("sha256", this.signing).update(parts.join("\n")).digest("base64url");
  }

  /** Whether `token` is `sign(...parts)`, compared in constant time. */
  verify(token: string, ...parts: string[]): boolean {
    const expected = Buffer.from(this.sign(...parts));
    const given = Buffer.from(token);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}
