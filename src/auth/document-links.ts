import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** Bytes of the signature a link carries (of the HMAC-SHA256): 128 bits, beyond guessing. */
const SIGNATURE_BYTES = 16;

/**
 * The signatures of the links to the embedded workspace's document page, where client keys are
 * listed (docs/trying-it.md#the-embedded-workspace): a link in an answer is opened by a browser,
 * which sends no key, so the answer's link carries `sig`, an HMAC of the workspace and the file
 * under a secret of this process. The page then opens for whoever holds the link (the caller the
 * answer was for), for as long as the process runs, and for no other document.
 */
export class DocumentLinkSigner {
  constructor(private readonly secret: Buffer = randomBytes(32)) {}

  /** The `sig` of the link to `filename` in `workspace`. */
  sign(workspace: string, filename: string): string {
    return this.digest(workspace, filename).toString("base64url");
  }

  /**
   * Whether `signature` is that of the link to `filename` in `workspace`: its text exactly, compared
   * in constant time (decoding first would take other spellings of the same bytes: the last of its 22
   * characters carries 2 bits, and the decoder skips characters outside the alphabet).
   */
  verify(workspace: string, filename: string, signature: unknown): boolean {
    if (typeof signature !== "string") return false;
    const given = Buffer.from(signature);
    const expected = Buffer.from(this.sign(workspace, filename));
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  private digest(workspace: string, filename: string): Buffer {
    // A line break cannot be in a workspace id, so no two pairs sign the same text.
    return createHmac("sha256", this.secret).update(`${workspace}\n${filename}`).digest().subarray(0, SIGNATURE_BYTES);
  }
}
