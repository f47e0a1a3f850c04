import { createServer, type Server } from "node:http";
import Provider from "oidc-provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningWorkspace, startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import { FormBrowser, HandDrivenClient, pkcePair } from "../../helpers/oauth-client.js";
import { freePort } from "../../helpers/redis-server.js";
import { API_KEY, FIXTURE_DOCUMENTS, type RunningAdapter, startAdapter } from "../../helpers/start-stack.js";

/** Submits the first form of an identity provider's page (its hidden fields and these), following redirects within `origin`. */
async function submitForm(browser: FormBrowser, pageUrl: string, html: string, origin: string, fields: Record<string, string> = {}) {
  const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
  if (!action) throw new Error(`no form: ${html.slice(0, 300)}`);
  const body = new URLSearchParams();
  for (const [, name, value] of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/?>/g)) body.set(name as string, value as string);
  for (const [name, value] of Object.entries(fields)) body.set(name, value);
  return browser.follow(new URL(action.replace(/&amp;/g, "&"), pageUrl), origin, { method: "POST", body, headers: { "content-type": "application/x-www-form-urlencoded" } });
}

describe("the team set-up: the deployment holds the key, people sign in at the organisation's OpenID Connect provider", () => {
  let workspace: RunningWorkspace;
  let adapter: RunningAdapter;
  let idp: Server;
  let idpUrl: string;
  const upstreamKeys: string[] = [];

  beforeAll(async () => {
    workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme", "globex"], apiKeys: [API_KEY], stepDelayMs: 10 });
    workspace.server.on("request", (request: { headers: Record<string, unknown> }) => upstreamKeys.push(String(request.headers.authorization ?? "")));
    const [idpPort, adapterPort] = [await freePort(), await freePort()];
    idpUrl = `http://127.0.0.1:${idpPort}`;
    // oidc-provider itself plays the organisation's identity provider (its development login form: any login and password).
    const provider = new Provider(idpUrl, {
      clients: [
        {
          client_id: "workspace-adapter",
          client_secret: "adapter-secret-at-the-idp",
          redirect_uris: [`http://127.0.0.1:${adapterPort}/oauth/idp/callback`],
          grant_types: ["authorization_code"],
          response_types: ["code"],
        },
      ],
    });
    idp = createServer(provider.callback());
    await new Promise<void>((resolve) => idp.listen(idpPort, "127.0.0.1", resolve));
    adapter = await startAdapter(workspace.url, {
      PORT: String(adapterPort),
      MCP_OAUTH: "on",
      WORKSPACE_API_KEY: API_KEY,
      ADAPTER_API_KEYS: "sk-a-client-key",
      OAUTH_IDP_ISSUER: idpUrl,
      OAUTH_IDP_CLIENT_ID: "workspace-adapter",
      OAUTH_IDP_CLIENT_SECRET: "adapter-secret-at-the-idp",
      // oidc-provider's development login makes the login name the subject.
      OAUTH_IDP_ALLOWED_SUBJECTS: "alice",
    });
  });
  afterAll(async () => {
    await adapter?.close();
    idp?.closeAllConnections();
    idp?.close();
    await workspace?.close();
  });

  it("signs in at the provider, picks a workspace, and calls tools with the deployment's key; no key is typed", async () => {
    const client = await new HandDrivenClient(adapter.url).register();
    const { verifier, challenge } = pkcePair();
    const browser = new FormBrowser();
    const consentPage = await browser.follow(client.authorizationUrl(challenge), adapter.url);
    if ("left" in consentPage) throw new Error("no consent page");
    const signInPage = await consentPage.page.text();
    expect(signInPage).toContain("Sign in");
    expect(signInPage).not.toContain('type="password"');
    const toIdp = await browser.submit(consentPage.url, signInPage, adapter.url, { action: "sign-in" });
    if (!("left" in toIdp)) throw new Error("not sent to the identity provider");
    expect(toIdp.left.origin).toBe(idpUrl);
    expect(toIdp.left.searchParams.get("code_challenge_method")).toBe("S256");
    const login = await browser.follow(toIdp.left, idpUrl);
    if ("left" in login) throw new Error("no login page");
    const consentAtIdp = await submitForm(browser, login.url, await login.page.text(), idpUrl, { login: "alice", password: "any" });
    const back = "left" in consentAtIdp ? consentAtIdp : await submitForm(browser, consentAtIdp.url, await consentAtIdp.page.text(), idpUrl);
    if (!("left" in back)) throw new Error(`stayed at the identity provider: ${await back.page.text()}`);
    expect(back.left.pathname).toBe("/oauth/idp/callback");
    const chooser = await browser.follow(back.left, adapter.url);
    if ("left" in chooser) throw new Error("no workspace step");
    const chooserHtml = await chooser.page.text();
    expect(chooserHtml).toContain('value="globex"');
    const done = await browser.submit(chooser.url, chooserHtml, adapter.url, { workspace: "globex", action: "allow" });
    if (!("left" in done)) throw new Error("no code");
    const tokens = await client.exchange(done.left.searchParams.get("code") as string, verifier);
    expect(tokens.status).toBe(200);
    upstreamKeys.length = 0;
    const asked = await client.callTool(`Bearer ${tokens.body.access_token}`, { name: "ask", arguments: { question: "What does the adapter do?" } }, `${adapter.url}/oauth/mcp`);
    expect(asked.status).toBe(200);
    expect(new Set(upstreamKeys)).toEqual(new Set([`Bearer ${API_KEY}`]));
  });

  it("refuses a person the provider signs in who is not on the allow-list: no workspace step, no grant", async () => {
    const client = await new HandDrivenClient(adapter.url).register();
    const browser = new FormBrowser();
    const consentPage = await browser.follow(client.authorizationUrl(pkcePair().challenge), adapter.url);
    if ("left" in consentPage) throw new Error("no consent page");
    const toIdp = await browser.submit(consentPage.url, await consentPage.page.text(), adapter.url, { action: "sign-in" });
    if (!("left" in toIdp)) throw new Error("not sent to the identity provider");
    const login = await browser.follow(toIdp.left, idpUrl);
    if ("left" in login) throw new Error("no login page");
    const consentAtIdp = await submitForm(browser, login.url, await login.page.text(), idpUrl, { login: "mallory", password: "any" });
    const back = "left" in consentAtIdp ? consentAtIdp : await submitForm(browser, consentAtIdp.url, await consentAtIdp.page.text(), idpUrl);
    if (!("left" in back)) throw new Error("stayed at the identity provider");
    const refused = await browser.follow(back.left, adapter.url);
    if ("left" in refused) throw new Error(`redirected to ${refused.left.href}`);
    expect(refused.page.status).toBe(400);
    expect(await refused.page.text()).toContain("allow-list does not include you");
  });

  it("refuses a callback that did not start in this browser, and a workspace step without a sign-in", async () => {
    const stray = await fetch(`${adapter.url}/oauth/idp/callback?code=x&state=y`, { redirect: "manual" });
    expect(stray.status).toBe(400);
    expect(await stray.text()).toContain("did not start in this browser");
    const client = await new HandDrivenClient(adapter.url).register();
    const browser = new FormBrowser();
    const consentPage = await browser.follow(client.authorizationUrl(pkcePair().challenge), adapter.url);
    if ("left" in consentPage) throw new Error("no consent page");
    const html = await consentPage.page.text();
    const forged = html.replace('name="step" value="sign-in"', 'name="step" value="workspace"');
    const refused = await browser.submit(consentPage.url, forged, adapter.url, { workspace: "acme", action: "allow" });
    if ("left" in refused) throw new Error(`redirected to ${refused.left.href}`);
    expect(refused.page.status).toBe(403);
  });
});
