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

  it("names each problem by its place and name, never by its key", () => {
    const { entries, problems } = parseKeyList("good=sk-1,-bad=sk-secret,sk-1,ok=sk\u00e9");
    expect(entries).toEqual([{ name: "good", key: "sk-1" }]);
    expect(problems).toEqual([
      "entry 2: the name before '=' must be letters, digits, '.', '_' or '-' (at most 64, starting with a letter or digit)",
      "entry 3 repeats the key of entry 1",
      "entry 4 ('ok'): a key is printable ASCII without spaces or commas",
    ]);
  });
});
