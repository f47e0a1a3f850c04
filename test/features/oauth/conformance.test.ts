import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startBrowser } from "../../helpers/browser.js";
import { consentInBrowser } from "../../helpers/consent-in-browser.js";
import { CHROMIUM, describeWith } from "../../helpers/external-programs.js";
import { freePort } from "../../helpers/redis-server.js";
import { API_KEY, type Stack, startStack } from "../../helpers/start-stack.js";

/** The official MCP conformance suite's command line (a devDependency: `@modelcontextprotocol/conformance`). */
const CONFORMANCE = createRequire(import.meta.url).resolve("@modelcontextprotocol/conformance/dist/index.js");

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

/**
 * Runs `conformance authorization` (both authorization-server scenarios) against the adapter's
 * issuer. The suite prints the authorization URL and waits for its callback; the test opens that
 * URL in Chromium (with `scope` added when asked: the suite sends none) and gives consent there.
 * The checks it recorded, read from its output folder.
 */
async function runConformance(stack: Stack, browser: Browser, scope: string | undefined): Promise<Check[]> {
  const port = await freePort();
  const registered = await fetch(`${stack.url}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_name: "MCP conformance suite", redirect_uris: [`http://127.0.0.1:${port}/callback`], token_endpoint_auth_method: "none", application_type: "native" }),
  });
  const { client_id: clientId } = (await registered.json()) as { client_id: string };
  const output = mkdtempSync(join(tmpdir(), "conformance-"));
  const child = spawn(process.execPath, [CONFORMANCE, "authorization", "--url", `${stack.url}/oauth`, "--client-id", clientId, "--resource", `${stack.url}/oauth/mcp`, "-p", String(port), "-o", output], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let printed = "";
  const exited = new Promise<number>((resolve) => child.once("exit", (code) => resolve(code ?? -1)));
  const authorizationUrl = new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      printed += chunk.toString("utf8");
      const found = /^(http\S+\/oauth\/authorize\?\S+)$/m.exec(printed)?.[1];
      if (found) resolve(found);
    });
    child.stderr.on("data", (chunk: Buffer) => (printed += chunk.toString("utf8")));
    void exited.then(() => reject(new Error(`the conformance suite ended before asking for consent:\n${printed}`)));
  });
  try {
    const url = new URL(await authorizationUrl);
    if (scope !== undefined) url.searchParams.set("scope", scope);
    const callback = await consentInBrowser(browser, url.href, API_KEY, "acme", `http://127.0.0.1:${port}/callback`);
    expect(callback.searchParams.get("code")).toBeTruthy();
    expect(await exited).toBe(0);
    const checks: Check[] = [];
    for (const file of readdirSync(output, { recursive: true }) as string[]) {
      if (file.endsWith("checks.json")) checks.push(...(JSON.parse(readFileSync(join(output, file), "utf8")) as Check[]));
    }
    return checks;
  } finally {
    child.kill();
    rmSync(output, { recursive: true, force: true });
  }
}

describeWith(CHROMIUM, "the official MCP conformance suite's authorization-server scenarios, consent given in Chromium", () => {
  let stack: Stack;
  let browser: Browser;
  beforeAll(async () => {
    stack = await startStack({ MCP_OAUTH: "on" });
    browser = await startBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  for (const scope of [undefined, "workspace", "openid workspace"]) {
    it(`passes authorization-server-metadata-endpoint and authorization-code-grant (${scope === undefined ? "no scope, as the suite sends it" : `scope=${scope}`})`, async () => {
      const checks = await runConformance(stack, browser, scope);
      const ids = checks.map((check) => check.id);
      expect(ids).toEqual(expect.arrayContaining(["authorization-server-metadata", "authorization-code-grant"]));
      const failed = checks.filter((check) => check.status === "FAILURE");
      expect(failed).toEqual([]);
      expect(checks.find((check) => check.id === "authorization-code-grant")?.status).toBe("SUCCESS");
    }, 120_000);
  }
});
