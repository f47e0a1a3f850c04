import { execFileSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * Runs the fixture in a process of its own on the compiled code (the suite's setup compiles it), and
 * counts, at each of its steps, the computed keys of `process.nextTick`'s tick literal whose define
 * V8's feedback calls megamorphic (monomorphic ones named too, so that a V8 printing otherwise fails the premise).
 */
function steps(mode: "none" | "helper" | "adapter"): { counts: Record<string, { monomorphic: number; megamorphic: number }>; facts: Record<string, boolean> } {
  const script = fileURLToPath(new URL("../../fixtures/v8/tick-object-shape.mjs", import.meta.url));
  // V8 prints to the process's stdout itself: into a file, which never refuses a write as a full pipe can.
  const dir = mkdtempSync(join(tmpdir(), "tick-object-shape-"));
  const file = join(dir, "stdout.txt");
  const fd = openSync(file, "w");
  let output: string;
  try {
    execFileSync(process.execPath, ["--allow-natives-syntax", "--expose-gc", script, mode], { stdio: ["ignore", fd, "inherit"], timeout: 60_000 });
    output = readFileSync(file, "utf8");
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
  const counts: Record<string, { monomorphic: number; megamorphic: number }> = {};
  let facts: Record<string, boolean> = {};
  // `%DebugPrint` of a string prints it quoted: `[String]: "STEP warm"` (`c"…"` when concatenated).
  for (const section of output.split(/\[String\]: [a-z]?"STEP /).slice(1)) {
    const line = section.slice(0, section.indexOf("\n"));
    const name = line.slice(0, line.lastIndexOf('"'));
    if (name.startsWith("facts ")) {
      facts = JSON.parse(name.slice("facts ".length)) as Record<string, boolean>;
      continue;
    }
    counts[name] = {
      monomorphic: section.match(/DefineKeyedOwnPropertyInLiteral MONOMORPHIC/g)?.length ?? 0,
      megamorphic: section.match(/DefineKeyedOwnPropertyInLiteral MEGAMORPHIC/g)?.length ?? 0,
    };
  }
  return { counts, facts };
}

describe("process.nextTick after the process was idle", () => {
  // The premise (docs/benchmarks.md#what-shaped-these-numbers): should a V8 keep the record, the hold is no longer needed.
  it("goes megamorphic on its tick literal's keys once idle collections took the tick objects' maps", () => {
    const { counts } = steps("none");
    expect(counts.warm).toEqual({ monomorphic: 5, megamorphic: 0 });
    expect(counts.idle?.megamorphic).toBeGreaterThan(0);
  });

  it("stays monomorphic while a tick object is held, and not once it is let go", () => {
    const { counts, facts } = steps("helper");
    expect(facts).toEqual({ heldTick: true, releasedTick: true });
    expect(counts.warm).toEqual({ monomorphic: 5, megamorphic: 0 });
    expect(counts.idle).toEqual({ monomorphic: 5, megamorphic: 0 });
    expect(counts.released?.megamorphic).toBeGreaterThan(0);
  });

  it("stays monomorphic in a process that created an adapter", () => {
    const { counts } = steps("adapter");
    expect(counts.warm).toEqual({ monomorphic: 5, megamorphic: 0 });
    expect(counts.idle).toEqual({ monomorphic: 5, megamorphic: 0 });
  });
});
