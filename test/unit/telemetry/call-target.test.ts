import { describe, expect, it } from "vitest";
import { CallTarget } from "../../../src/telemetry/call-target.js";

// An upstream call's span records its URL as `new URL(path, base)` gives it; CallTarget gives the
// same without parsing the paths the parser leaves as they are, and parses every other one.

const BASES = ["http://127.0.0.1:8000/", "https://workspace.example/api/", "http://user:p%40ss@[::1]:80/base/", "https://h.example:8443/"];
const PATHS = [
  "/queries",
  "/api/queries/q_123/events?after=4&limit=100",
  "/queries?workspace=a%20b&x=y?z",
  "/queries/../secrets",
  "/queries/./x",
  "/queries/%2e%2E/x",
  "/queries/.hidden/x..y",
  "//evil.example/x",
  "/\\evil.example/x",
  "/a b",
  "/a'b?c'd",
  "/é?q=ü",
  "/a#b",
  "/a?b#c",
  "/{x}/`y`/^z|",
  "/a/..",
  "/a/.?b",
  "",
  "relative/path",
];

/** What the parser makes of `path` on `base`, or the error it throws (a URL with no host: `/\\`). */
function parsed(path: string, base: URL) {
  try {
    const url = new URL(path, base);
    return { full: url.href, hostname: url.hostname, port: Number(url.port || (url.protocol === "https:" ? 443 : 80)), pathname: url.pathname };
  } catch (error) {
    return { error: String(error) };
  }
}

/** What CallTarget makes of it, or the error it throws. */
function recorded(target: CallTarget, path: string) {
  try {
    return target.url(path);
  } catch (error) {
    return { error: String(error) };
  }
}

describe("the URL an upstream call's span records", () => {
  it("is what the URL parser makes of the path against the base, for plain and unusual paths", () => {
    for (const base of BASES.map((text) => new URL(text))) {
      const target = new CallTarget(base);
      for (const path of PATHS) expect(recorded(target, path), `${path} on ${base.href}`).toEqual(parsed(path, base));
      // Asked again, from what it remembers.
      for (const path of PATHS) expect(recorded(target, path), `${path} on ${base.href}, again`).toEqual(parsed(path, base));
    }
  });

  it("is the parser's for random paths made of the characters that matter", () => {
    const alphabet = ["a", "Z", "0", "/", ".", "%", "2", "e", "E", "?", "#", "\\", " ", "'", "-", "_", "~", "@", ":", "é", "\t", "&", "="];
    const base = new URL("http://u:p@h.example:81/b/");
    const target = new CallTarget(base);
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let index = 0; index < 3000; index += 1) {
      let path = "/";
      const length = Math.floor(random() * 12);
      for (let at = 0; at < length; at += 1) path += alphabet[Math.floor(random() * alphabet.length)];
      expect(recorded(target, path), JSON.stringify(path)).toEqual(parsed(path, base));
    }
  });
});
