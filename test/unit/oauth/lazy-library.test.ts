import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = new URL("../../../src/", import.meta.url).pathname;

function sources(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(folder, entry.name)) : entry.name.endsWith(".ts") ? [join(folder, entry.name)] : []);
}

describe("the OAuth library", () => {
  it("is never imported statically: only loaded (dynamic import) by the authorization server, on the first OAuth request", () => {
    const staticImports: string[] = [];
    const dynamicImports: string[] = [];
    for (const file of sources(SRC)) {
      const text = readFileSync(file, "utf8");
      if (/^import (?!type )[^;]*from "oidc-provider"/m.test(text)) staticImports.push(file);
      if (text.includes('import("oidc-provider")')) dynamicImports.push(file.slice(SRC.length));
    }
    expect(staticImports).toEqual([]);
    expect(dynamicImports).toEqual(["oauth/authorization-server.ts"]);
  });
});
