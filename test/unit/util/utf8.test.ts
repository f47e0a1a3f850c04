import { describe, expect, it } from "vitest";
import { utf8Of } from "../../../src/util/utf8.js";

describe("utf8Of", () => {
  it("gives Buffer.from's bytes for Latin-1, wide, astral and long text", () => {
    const texts = [
      "",
      "plain ASCII",
      "café, Latin-1 only",
      JSON.stringify({ content: "Sources:\n[1] handbook.md — Leave policy", emoji: "😀", cjk: "员工们的年假" }),
      JSON.stringify({ content: `${"An answer. ".repeat(200)}\n\nSources:\n[1] handbook.md — Leave policy`, emoji: "😀" }),
      "— ".repeat(40_000),
    ];
    for (const text of texts) expect(utf8Of(text).equals(Buffer.from(text, "utf8"))).toBe(true);
  });

  it("encodes a lone surrogate as U+FFFD, as Buffer.from does, instead of throwing", () => {
    for (const text of ["a\ud800b — c", "— \udc00", "\ud83d— end", `${"x".repeat(2000)}\ud800 — c`, `—${"x".repeat(2000)}\udc00`]) {
      expect(utf8Of(text).equals(Buffer.from(text, "utf8"))).toBe(true);
      expect(utf8Of(text).toString("utf8")).toContain("\ufffd");
    }
  });
});
