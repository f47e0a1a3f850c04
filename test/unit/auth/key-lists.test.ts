import { describe, expect, it } from "vitest";
import { parseKeyList } from "../../../src/config/key-lists.js";

describe("a key list (ADAPTER_API_KEYS, GATEWAY_API_KEYS, ADMIN_API_KEYS, ADAPTER_API_KEYS_FILE)", () => {
  it("reads named and bare keys separated by commas or lines, skipping comment lines", () => {
    const { entries, problems } = parseKeyList("team-search=sk-1, sk-bare\n# rotated in November\nteam-search = sk-2\n\n");
    expect(problems).toEqual([]);
    expect(entries).toEqual([
      { name: "team-search", key: "sk-1" },
      { name: undefined, key: "sk-bare" },
      { name: "team-search", key: "sk-2" },
    ]);
  });

  it("reads a bare key that ends in Base64 padding as a key, and a padded key behind a name", () => {
    expect(parseKeyList("c2stYWJj=, c2stYWI==, ops=b3BzLWtleQ==").entries).toEqual([
      { name: undefined, key: "c2stYWJj=" },
      { name: undefined, key: "c2stYWI==" },
      { name: "ops", key: "b3BzLWtleQ==" },
    ]);
  });

  it("names each problem by its place only, never by its name or key", () => {
    const { entries, problems } = parseKeyList("good=sk-1,-bad=sk-secret,sk-1,ok=sk\u00e9,dup=sk-1");
    expect(entries).toEqual([{ name: "good", key: "sk-1" }]);
    expect(problems).toEqual([
      "entry 2: the name before '=' must be letters, digits, '.', '_' or '-' (at most 64, starting with a letter or digit)",
      "entry 3 repeats the key of entry 1",
      "entry 4: a key is printable ASCII without spaces or commas",
      "entry 5 repeats the key of entry 1",
    ]);
  });

  it("reads an entry one way only: '=' only at its end is a bare key, '=' before it is name=key (a key with '=' inside needs a name)", () => {
    expect(parseKeyList("team=a=b, ops = c2stYWI==, abc=, abc==").entries).toEqual([
      { name: "team", key: "a=b" },
      { name: "ops", key: "c2stYWI==" },
      { name: undefined, key: "abc=" },
      { name: undefined, key: "abc==" },
    ]);
  });

  it("refuses, quoting nothing, what could be a key misread as a name: a key-like name, a leading '=', '==' inside", () => {
    const secret = ["sk-CANARY-MID=tail42", "sk_live_x=y", "AKIAEXAMPLE=y", "a8f3k2l5m9n0p1q2r3s4t5=x", "=c2stYWI", "c2stYWI==tail"];
    const { entries, problems } = parseKeyList(secret.join(","));
    expect(entries).toEqual([]);
    expect(problems).toHaveLength(secret.length);
    expect(problems.slice(0, 4).every((problem) => problem.includes("looks like a key, not a name"))).toBe(true);
    expect(problems[4]).toMatch(/^entry 5: starts with '='/);
    expect(problems[5]).toMatch(/^entry 6: '==' inside/);
    for (const problem of problems) expect(problem).not.toMatch(/CANARY|tail|sk_live|AKIA|a8f3|c2st/);
    // Names as people write them pass, digits and all.
    expect(parseKeyList("team-search-2024=k1, ops.eu-west-1=k2, litellm=k3, skunkworks=k4").problems).toEqual([]);
  });
});
