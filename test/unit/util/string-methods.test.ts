import { describe, expect, it } from "vitest";
import { keepStringMethodsFast } from "../../../src/util/string-methods.js";

describe("keepStringMethodsFast", () => {
  it("changes nothing any string or String.prototype shows, however often it runs", () => {
    const before = Object.getOwnPropertyNames(String.prototype).sort();
    keepStringMethodsFast();
    keepStringMethodsFast();
    expect(Object.getOwnPropertyNames(String.prototype).sort()).toEqual(before);
    expect("probe" in String.prototype).toBe(false);
    expect("a,b".split(",")).toEqual(["a", "b"]);
    expect("héllo".charCodeAt(1)).toBe(233);
  });
});
