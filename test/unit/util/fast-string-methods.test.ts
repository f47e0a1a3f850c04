import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/** The fixture's steps, in a process of its own on the compiled code (the suite's setup compiles it): the suite's workers share one isolate. */
function steps(mode: "adapter" | "helper"): Record<string, boolean> {
  const script = fileURLToPath(new URL("../../fixtures/v8/string-prototype.mjs", import.meta.url));
  return JSON.parse(execFileSync(process.execPath, ["--allow-natives-syntax", script, mode], { encoding: "utf8", timeout: 30_000 })) as Record<string, boolean>;
}

describe("string methods after ioredis has loaded", () => {
  // The premise (docs/benchmarks.md#what-shaped-these-numbers) is checked too: should a V8 keep the prototype fast, the helper is no longer needed.
  it("are looked up on a fast String.prototype again once an adapter is created, and stay so", () => {
    expect(steps("adapter")).toEqual({ atStart: true, afterIoredis: false, afterCreateAdapter: true, afterLaterSubclass: true, sameMethods: true });
  });

  it("are made fast by the helper alone, as often as it is called", () => {
    expect(steps("helper")).toEqual({ atStart: true, afterSubclass: false, afterHelper: true, afterHelperAgain: true, sameMethods: true });
  });
});
