import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectRoot } from "../../../src/util/package-info.js";
import { waitFor } from "../../helpers/wait-for.js";

// The Open Responses compliance suite (spec 2026-04-24), vendored unmodified in
// test/fixtures/openresponses/compliance (its README says from where; its `zod` is zod 3, as
// vitest.config.ts resolves it), run whole against the adapter as a new user starts it: the compiled
// entry point, `npm start`'s, in front of the embedded workspace, with the suite's own defaults (a
// bearer key, no other header). Every test passes but those named below, each for the reason given.

/**
 * Fails by nature: it offers a `get_weather` function under `tool_choice` `auto` and expects the
 * model to choose to call it; the workspace answers questions and chooses no client tool
 * (docs/responses-api.md#tools-and-tool_choice).
 */
const FAILS_BY_NATURE = ["tool-calling"];

/** WebSocket mode (docs/responses-api.md#websocket-mode): `GET /v1/responses` upgraded, `response.create` events. */
const WEBSOCKET = [
  "websocket-response",
  "websocket-sequential-responses",
  "websocket-continuation",
  "websocket-reconnect-store-false-recovery",
  "websocket-previous-response-not-found",
  "websocket-failed-continuation-evicts-cache",
  "websocket-compact-new-chain",
];

/** The suite's tests at spec 2026-04-24, as vendored: a refreshed suite with tests added or dropped fails here first. */
const SUITE = [
  "basic-response",
  "assistant-phase",
  "response-output-phase-schema",
  "streaming-response",
  ...WEBSOCKET,
  "system-prompt",
  "tool-calling",
  "image-input",
  "multi-turn",
  "compact-response",
  "compact-missing-model",
];

/** What the suite's module exports, as this test uses it (the vendored TypeScript is not type-checked: tsconfig.json leaves it out). */
interface ComplianceSuite {
  testTemplates: { id: string }[];
  runAllTests(
    config: { baseUrl: string; apiKey: string; authHeaderName: string; useBearerPrefix: boolean; model: string; runtime?: "server" | "browser" },
    onProgress: (result: unknown) => void,
  ): Promise<{ id: string; status: string; errors?: string[] }[]>;
}

const SUITE_FOLDER = new URL("../../fixtures/openresponses/compliance/src/", import.meta.url);
const SUITE_MODULE = fileURLToPath(new URL("lib/compliance-tests.ts", SUITE_FOLDER));
const RESOURCE_SCHEMA = fileURLToPath(new URL("generated/kubb/zod/responseResourceSchema.ts", SUITE_FOLDER));

let child: ChildProcess;
let baseUrl = "";
beforeAll(async () => {
  child = spawn(process.execPath, ["dist/src/main.js"], {
    cwd: projectRoot(),
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", WORKSPACE_BASE_URL: "", EMBEDDED_STEP_DELAY_MS: "5", LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  await waitFor(() => /serving (http:\/\/127\.0\.0\.1:\d+\/v1)/.test(output), "the adapter serving", { timeoutMs: 45_000 });
  baseUrl = /serving (http:\/\/127\.0\.0\.1:\d+\/v1)/.exec(output)?.[1] as string;
}, 60_000);

afterAll(() => {
  child?.kill("SIGTERM");
});

describe("the Open Responses compliance suite (2026-04-24), against `npm start`", () => {
  it("runs on zod 3, as it was written for", async () => {
    // zod 3's schemas name their kind in `_def.typeName`; zod 4's do not (`_def.type`).
    const { responseResourceSchema } = (await import(RESOURCE_SCHEMA)) as { responseResourceSchema: { _def: { typeName?: string } } };
    expect(responseResourceSchema._def.typeName).toBe("ZodObject");
  });

  it("passes every test but tool-calling (by nature), WebSocket mode's included", async () => {
    const suite = (await import(SUITE_MODULE)) as ComplianceSuite;
    expect(suite.testTemplates.map((template) => template.id)).toEqual(SUITE);
    const config = { baseUrl, apiKey: "any-key-works-locally", authHeaderName: "Authorization", useBearerPrefix: true, model: "ask", runtime: "server" as const };
    const results = await suite.runAllTests(config, () => {});
    const failing = new Set(FAILS_BY_NATURE);
    const outcome = (result: { id: string; status: string; errors?: string[] }) => `${result.id}: ${result.status}${result.errors?.length ? ` (${result.errors.join("; ")})` : ""}`;
    const expected = results.map((result) => `${result.id}: ${failing.has(result.id) ? "failed" : "passed"}`);
    expect(results.map((result) => (failing.has(result.id) === (result.status === "failed") ? `${result.id}: ${result.status}` : outcome(result)))).toEqual(expected);
    // tool-calling fails only for the call it expects: the response itself is valid.
    expect(results.find((result) => result.id === "tool-calling")?.errors).toEqual(['Expected output item of type "function_call" but none found']);
  }, 120_000);
});
