import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const src = join(dirname(fileURLToPath(import.meta.url)), "../../src");

/**
 * Module-level state that is deliberate: the o200k counter's scratch buffers (synchronous, reused
 * by every count in a thread; nothing flows from one count to the next) and the o200k table (read
 * once per thread from gpt-tokenizer's file, never changed after).
 */
const ALLOWED = new Set([
  "tokens/count-o200k.ts: let utf8",
  "tokens/count-o200k.ts: let starts",
  "tokens/count-o200k.ts: let ranks",
  "tokens/rank-table.ts: let o200k",
]);

describe("the source tree", () => {
  it("keeps no mutable state at module level: caches, timers and bookkeeping hang on the adapter", () => {
    const found: string[] = [];
    for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
      // Entry points (main.ts) are scripts: their top level is the program, not a module's state.
      if (!entry.isFile() || !entry.name.endsWith(".ts") || entry.name === "main.ts") continue;
      const file = relative(src, join(entry.parentPath, entry.name));
      const text = readFileSync(join(entry.parentPath, entry.name), "utf8");
      for (const match of text.matchAll(/^(?:export )?(?:let|var) (\w+)|^(?:export )?const (\w+)(?::[^=\n]+)? = new (?:Map|WeakMap|WeakSet)\b/gm)) {
        const name = match[1] ? `let ${match[1]}` : `const ${match[2]}`;
        if (!ALLOWED.has(`${file}: ${name}`)) found.push(`${file}: ${name}`);
      }
    }
    expect(found).toEqual([]);
  });
});
