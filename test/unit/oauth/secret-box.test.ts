import { describe, expect, it } from "vitest";
import { SecretBox } from "../../../src/oauth/secret-box.js";

describe("SecretBox", () => {
  const box = new SecretBox("a-secret-of-at-least-thirty-two-characters");

  it("opens what it sealed for the same context only", () => {
    const sealed = box.seal("sk-workspace-key", "grant-1");
    expect(sealed).not.toContain("sk-workspace-key");
    expect(box.open(sealed, "grant-1")).toBe("sk-workspace-key");
    expect(box.open(sealed, "grant-2")).toBeUndefined();
    expect(new SecretBox("another-secret-of-at-least-thirty-two-chars").open(sealed, "grant-1")).toBeUndefined();
    const [version, id, iv, body] = sealed.split(".");
    const flipped = `${body?.[0] === "A" ? "B" : "A"}${body?.slice(1)}`;
    expect(box.open(`${version}.${id}.${iv}.${flipped}`, "grant-1")).toBeUndefined();
    expect(box.open("garbage", "grant-1")).toBeUndefined();
  });

  it("seals the same text differently each time, and derives the same keys from the same secret", () => {
    expect(box.seal("x", "c")).not.toBe(box.seal("x", "c"));
    expect(new SecretBox("a-secret-of-at-least-thirty-two-characters").derive("cookies")).toEqual(box.derive("cookies"));
    expect(box.derive("cookies")).not.toEqual(box.derive("signing-key"));
  });

  it("signs and verifies in constant time", () => {
    const token = box.sign("csrf", "nonce", "uid");
    expect(box.verify(token, "csrf", "nonce", "uid")).toBe(true);
    expect(box.verify(token, "csrf", "nonce", "other")).toBe(false);
    expect(box.verify("short", "csrf", "nonce", "uid")).toBe(false);
  });

  it("is a keyring: a new secret put first seals and signs, the old one still opens and verifies; dropped, it no longer does", () => {
    const old = new SecretBox("an-old-secret-of-at-least-thirty-two-chars");
    const sealedBefore = old.seal("sk-key", "grant-1");
    const signedBefore = old.sign("csrf", "n", "u");
    const rotated = new SecretBox(["a-new-secret-of-at-least-thirty-two-chars", "an-old-secret-of-at-least-thirty-two-chars"]);
    expect(rotated.open(sealedBefore, "grant-1")).toBe("sk-key");
    expect(rotated.verify(signedBefore, "csrf", "n", "u")).toBe(true);
    const sealedAfter = rotated.seal("sk-key", "grant-2");
    expect(old.open(sealedAfter, "grant-2")).toBeUndefined();
    const dropped = new SecretBox("a-new-secret-of-at-least-thirty-two-chars");
    expect(dropped.open(sealedAfter, "grant-2")).toBe("sk-key");
    expect(dropped.open(sealedBefore, "grant-1")).toBeUndefined();
    expect(dropped.verify(signedBefore, "csrf", "n", "u")).toBe(false);
  });
});
