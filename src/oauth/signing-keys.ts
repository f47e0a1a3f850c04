import { createPrivateKey } from "node:crypto";
import type { JWK } from "oidc-provider";
import type { SecretBox } from "./secret-box.js";

/** The Ed25519 signing keys derived from the secrets (the current one first): the same on every replica, never stored. */
export function signingKeys(box: SecretBox): JWK[] {
  const kids = box.deriveAll("signing-key-id", 12);
  return box.deriveAll("signing-key").map((seed, index) => {
    const pkcs8 = Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), seed]);
    const jwk = createPrivateKey({ key: pkcs8, format: "der", type: "pkcs8" }).export({ format: "jwk" }) as JWK;
    return { ...jwk, alg: "EdDSA", use: "sig", kid: (kids[index] as Buffer).toString("base64url") };
  });
}

