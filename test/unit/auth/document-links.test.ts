import { describe, expect, it } from "vitest";
import { DocumentLinkSigner } from "../../../src/auth/document-links.js";

describe("DocumentLinkSigner", () => {
  const signer = new DocumentLinkSigner(Buffer.alloc(32, 7));

  it("verifies a link's own signature, for its workspace and file only", () => {
    const sig = signer.sign("demo", "handbook.md");
    expect(sig).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(signer.verify("demo", "handbook.md", sig)).toBe(true);
    expect(signer.verify("demo", "security-policy.md", sig)).toBe(false);
    expect(signer.verify("other", "handbook.md", sig)).toBe(false);
    expect(new DocumentLinkSigner().verify("demo", "handbook.md", sig)).toBe(false);
  });

  it("refuses every other spelling of the same bytes: another last character, characters outside the alphabet, padding", () => {
    const sig = signer.sign("demo", "handbook.md");
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    // The last of 22 characters carries 2 bits: 16 characters decode to the same 16 bytes; only the signature itself passes.
    const respelled = [...alphabet].map((last) => `${sig.slice(0, -1)}${last}`).filter((each) => each !== sig);
    expect(respelled.filter((each) => signer.verify("demo", "handbook.md", each))).toEqual([]);
    for (const each of [`${sig}=`, `${sig}==`, `${sig.slice(0, 5)}.${sig.slice(5)}`, ` ${sig}`, sig.toUpperCase(), "", 42, null]) {
      expect(signer.verify("demo", "handbook.md", each)).toBe(false);
    }
  });
});
