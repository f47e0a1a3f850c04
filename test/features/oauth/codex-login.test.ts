import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startBrowser } from "../../helpers/browser.js";
import { consentInBrowser } from "../../helpers/consent-in-browser.js";
import { CODEX, codexPath } from "../../helpers/codex-cli.js";
import { CHROMIUM, describeWith, OPENSSL } from "../../helpers/external-programs.js";
import { codexDocument, CODEX_CLIENT_ID, startDocumentHost } from "../../helpers/metadata-documents.js";
import { API_KEY, type Stack, startStack } from "../../helpers/start-stack.js";

/** Every file under a folder, read as text (what Codex stored of the login). */
function readAll(folder: string): string {
  let text = "";
  for (const file of readdirSync(folder, { recursive: true }) as string[]) {
    const path = join(folder, file);
    try {
      text += readFileSync(path, "utf8");
    } catch {
      // a folder
    }
  }
  return text;
}

/**
 * The real Codex CLI logging in to the adapter (`codex mcp add`, then `codex mcp login
 * --no-browser`): it discovers the authorization server, identifies itself by its client ID
 * metadata document (https://chatgpt.com/oauth/codex/client.json, served by a local HTTPS stand-in
 * that the adapter reaches through its production fetch, given only the name resolution and the
 * CA), prints the authorization URL; Chromium gives consent and goes back to Codex's loopback
 * listener, and Codex redeems the code.
 */
describeWith(OPENSSL, "the Codex CLI's login", () => {
  describeWith(CHROMIUM, "with consent in Chromium", () => {
    describeWith(CODEX, "against the adapter", () => {
      let host: Awaited<ReturnType<typeof startDocumentHost>>;
      let stack: Stack;
      let browser: Browser;
      let home: string;
      const requested: string[] = [];
      beforeAll(async () => {
        host = await startDocumentHost();
        host.documents.set("/oauth/codex/client.json", { body: codexDocument() });
        stack = await startStack({ MCP_OAUTH: "on" }, {}, { oauthMetadataFetch: host.fetchOptions });
        stack.server.on("request", (request: { method?: string; url?: string }) => requested.push(`${request.method} ${request.url}`));
        browser = await startBrowser();
        home = mkdtempSync(join(tmpdir(), "codex-home-"));
      });
      afterAll(async () => {
        await browser?.close();
        await stack?.close();
        await host?.close();
        if (home) rmSync(home, { recursive: true, force: true });
      });

      it("completes `codex mcp login` by its metadata document: consent in Chromium, a token bound to /oauth/mcp", async () => {
        const environment = { ...process.env, CODEX_HOME: home, NO_COLOR: "1" };
        const config = ["-c", 'mcp_oauth_credentials_store="file"'];
        const added = spawnSync(codexPath(), ["mcp", "add", "workspace", "--url", `${stack.url}/oauth/mcp`, ...config], { env: environment, encoding: "utf8", timeout: 60_000 });
        expect(added.status, added.stderr).toBe(0);
        const login: ChildProcessWithoutNullStreams = spawn(codexPath(), ["mcp", "login", "workspace", "--no-browser", ...config], { env: environment });
        let printed = "";
        const exited = new Promise<number>((resolve) => login.once("exit", (code) => resolve(code ?? -1)));
        try {
          const authorizationUrl = await new Promise<string>((resolve, reject) => {
            const read = (chunk: Buffer) => {
              printed += chunk.toString("utf8");
              const found = /(https?:\/\/\S+\/oauth\/authorize\?\S+)/.exec(printed)?.[1];
              if (found) resolve(found);
            };
            login.stdout.on("data", read);
            login.stderr.on("data", read);
            void exited.then(() => reject(new Error(`codex ended before printing an authorization URL:\n${printed}`)));
          });
          const url = new URL(authorizationUrl);
          expect(url.searchParams.get("client_id")).toBe(CODEX_CLIENT_ID);
          expect(url.searchParams.get("resource")).toBe(`${stack.url}/oauth/mcp`);
          // Consent in Chromium; the browser goes back to Codex's own loopback listener, which takes the code.
          const redirect = new URL(url.searchParams.get("redirect_uri") as string);
          const back = await consentInBrowser(browser, url.href, API_KEY, "globex", `${redirect.origin}${redirect.pathname}`);
          expect(back.searchParams.get("code")).toBeTruthy();
          expect(back.searchParams.get("iss")).toBe(`${stack.url}/oauth`);
          const code = await exited;
          expect(code, printed).toBe(0);
        } finally {
          login.kill();
        }
        // Codex redeemed the code at the token endpoint, with the resource; no registration happened.
        expect(requested).toEqual(expect.arrayContaining(["POST /oauth/token"]));
        expect(requested.some((line) => line.startsWith("POST /oauth/register"))).toBe(false);
        expect(host.requested).toContain("chatgpt.com/oauth/codex/client.json");
        // The token Codex stored works at /oauth/mcp (and is refused at /mcp): bound to the OAuth resource.
        const stored = readAll(home);
        const token = /wsoauth_[A-Za-z0-9_-]+/.exec(stored)?.[0];
        expect(token, "Codex stored no access token").toBeTruthy();
        const call = (path: string) =>
          fetch(`${stack.url}${path}`, {
            method: "POST",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream", "service-workspace": "acme" },
            body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
          });
        const tokens = [...stored.matchAll(/wsoauth_[A-Za-z0-9_-]+/g)].map((match) => match[0]);
        const statuses = await Promise.all(tokens.map(async (candidate) => {
          const response = await fetch(`${stack.url}/oauth/mcp`, {
            method: "POST",
            headers: { authorization: `Bearer ${candidate}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
            body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
          });
          return response.status;
        }));
        expect(statuses).toContain(200);
        expect((await call("/mcp")).status).toBe(401);
        expect(existsSync(home)).toBe(true);
      }, 180_000);
    });
  });
});
