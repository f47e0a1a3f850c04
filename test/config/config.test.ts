import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/config.js";

describe("loadConfig", () => {
  it("has defaults that run the embedded workspace on localhost:8080", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8080,
      host: "127.0.0.1",
      workspaceBaseUrl: undefined,
      maxChoices: 8,
      modeField: "mode",
      queryTimeoutMs: { ask: 120_000, reason: 300_000, build: 600_000 },
    });
  });

  it("lets QUERY_TIMEOUT_MS set all modes and a mode's own variable win", () => {
    const config = loadConfig({ QUERY_TIMEOUT_MS: "5000", BUILD_TIMEOUT_MS: "9000" });
    expect(config.queryTimeoutMs).toEqual({ ask: 5000, reason: 5000, build: 9000 });
  });

  it("names every bad variable", () => {
    expect(() =>
      loadConfig({ PORT: "eighty", MAX_CHOICES: "0", WORKSPACE_BASE_URL: "ftp://x", MODE_FIELD: "a b" }),
    ).toThrow(/PORT[\s\S]*WORKSPACE_BASE_URL[\s\S]*MAX_CHOICES[\s\S]*MODE_FIELD/);
    expect(() => loadConfig({ POLL_INTERVAL_MIN_MS: "500", POLL_INTERVAL_MAX_MS: "100" })).toThrow(
      ConfigError,
    );
  });

  it("drops a trailing slash from the upstream URL", () => {
    expect(loadConfig({ WORKSPACE_BASE_URL: "https://workspace.example.com/api/" }).workspaceBaseUrl).toBe(
      "https://workspace.example.com/api",
    );
  });
});

describe("the README", () => {
  it("documents every configuration variable in its table", async () => {
    const { readFileSync } = await import("node:fs");
    const { environmentSchema } = await import("../../src/config/config.js");
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    const missing = Object.keys(environmentSchema.shape).filter((name) => !readme.includes(`| \`${name}\` |`));
    expect(missing).toEqual([]);
  });
});
