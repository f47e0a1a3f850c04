import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HandDrivenClient, pkcePair, REDIRECT_URI } from "../../helpers/oauth-client.js";
import { API_KEY, type Stack, startStack } from "../../helpers/start-stack.js";

/** The fields of the consent page's current form, read as a browser would submit them. */
function hiddenFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [, name, value] of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[name as string] = value as string;
  return fields;
}

const alertOf = (html: string) => /role="alert">([^<]*)</.exec(html)?.[1];
/** A key of ADMIN_API_KEYS: it reads usage, and is never a workspace key (docs/governance.md#usage). */
const ADMIN_KEY = "sk-oauth-admin-key";

describe("OAuth refusals: each with the RFC's error, never a 500 and never a code it should not give", () => {
  let stack: Stack;
  let client: HandDrivenClient;
  beforeAll(async () => {
    stack = await startStack({ MCP_OAUTH: "on", ADMIN_API_KEYS: ADMIN_KEY });
    client = await new HandDrivenClient(stack.url).register();
  });
  afterAll(() => stack?.close());

  it("a wrong key at consent gets a clear message and no code", async () => {
    const { challenge } = pkcePair();
    const opened = await client.open(client.authorizationUrl(challenge));
    if ("left" in opened) throw new Error(`left to ${opened.left.href}`);
    expect(opened.status).toBe(200);
    const action = new URL(/<form method="post" action="([^"]+)"/.exec(opened.html)?.[1] ?? "", opened.pageUrl);
    const body = new URLSearchParams({ ...hiddenFields(opened.html), key: "sk-not-a-key", action: "continue" });
    const answer = await client.browser.request(action, { method: "POST", body, headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(answer.status).toBe(401);
    expect(answer.headers.get("location")).toBeNull();
    expect(alertOf(await answer.text())).toMatch(/did not accept this key/);
  });

  it("an admin's key typed at consent is refused without asking the workspace", async () => {
    const { challenge } = pkcePair();
    const opened = await client.open(client.authorizationUrl(challenge));
    if ("left" in opened) throw new Error(`left to ${opened.left.href}`);
    const action = new URL(/<form method="post" action="([^"]+)"/.exec(opened.html)?.[1] ?? "", opened.pageUrl);
    const asked = stack.workspace.control.calls.workspaces;
    const body = new URLSearchParams({ ...hiddenFields(opened.html), key: ADMIN_KEY, action: "continue" });
    const answer = await client.browser.request(action, { method: "POST", body, headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(answer.status).toBe(403);
    expect(answer.headers.get("location")).toBeNull();
    expect(alertOf(await answer.text())).toMatch(/never sent to the workspace/);
    expect(stack.workspace.control.calls.workspaces).toBe(asked);
  });

  it("the consent page cannot be framed, is not cached, and works as a plain form", async () => {
    const { challenge } = pkcePair();
    const opened = await client.open(client.authorizationUrl(challenge));
    if ("left" in opened) throw new Error("no page");
    const page = await client.browser.request(opened.pageUrl);
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    expect(page.headers.get("cache-control")).toBe("no-store");
    const html = await page.text();
    expect(html).toContain('type="password"');
    expect(html).toContain("How to revoke it");
    expect(html).toContain("127.0.0.1:8976");
    expect(html).not.toContain("<script");
  });

  it("a consent form without its CSRF token, or from another browser, gets no code", async () => {
    const { challenge } = pkcePair();
    const opened = await client.open(client.authorizationUrl(challenge));
    if ("left" in opened) throw new Error("no page");
    const action = new URL(/<form method="post" action="([^"]+)"/.exec(opened.html)?.[1] ?? "", opened.pageUrl);
    const post = (fields: Record<string, string>, init: { cookies?: boolean } = {}) => {
      const request = { method: "POST", body: new URLSearchParams(fields), headers: { "content-type": "application/x-www-form-urlencoded" } };
      return init.cookies === false ? fetch(action, { ...request, redirect: "manual" }) : client.browser.request(action, request);
    };
    const forged = await post({ step: "key", key: API_KEY, action: "continue", csrf: "forged" });
    expect(forged.status).toBe(403);
    expect(forged.headers.get("location")).toBeNull();
    const noToken = await post({ step: "key", key: API_KEY, action: "continue" });
    expect(noToken.status).toBe(403);
    // Another browser (none of this one's cookies), even with the right token: no such authorization there.
    const elsewhere = await post({ ...hiddenFields(opened.html), key: API_KEY, action: "continue" }, { cookies: false });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.headers.get("location")).toBeNull();
  });

  it("a finished consent cannot be submitted again (single-use)", async () => {
    const { challenge } = pkcePair();
    const opened = await client.open(client.authorizationUrl(challenge));
    if ("left" in opened) throw new Error("no page");
    const action = new URL(/<form method="post" action="([^"]+)"/.exec(opened.html)?.[1] ?? "", opened.pageUrl);
    const keyStep = await client.browser.request(action, {
      method: "POST",
      body: new URLSearchParams({ ...hiddenFields(opened.html), key: API_KEY, action: "continue" }),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    const choose = new URLSearchParams({ ...hiddenFields(await keyStep.text()), workspace: "acme", action: "allow" });
    const allowed = await client.browser.request(action, { method: "POST", body: choose, headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(allowed.status).toBe(303);
    const again = await client.browser.request(action, { method: "POST", body: choose, headers: { "content-type": "application/x-www-form-urlencoded" } });
    // Refused either as a form whose CSRF cookie is gone (403) or as an authorization already finished (400).
    expect([400, 403]).toContain(again.status);
    expect(again.headers.get("location")).toBeNull();
  });

  it("a workspace the key cannot list is not granted", async () => {
    const other = await startStack({ MCP_OAUTH: "on" }, { workspaces: ["acme"] });
    try {
      const hand = await new HandDrivenClient(other.url).register();
      const { challenge } = pkcePair();
      await expect(hand.authorize(challenge, API_KEY, "globex")).rejects.toThrow(/Pick one of the workspaces this key can read/);
    } finally {
      await other.close();
    }
  });

  it("an unregistered or altered redirect URI is never redirected to", async () => {
    const { challenge } = pkcePair();
    for (const redirectUri of ["https://evil.example/callback", "http://127.0.0.1:8976/callback/other", `${REDIRECT_URI}?x=1`]) {
      const opened = await client.open(client.authorizationUrl(challenge, { redirect_uri: redirectUri }));
      expect("left" in opened).toBe(false);
      if ("left" in opened) continue;
      expect(opened.status).toBe(400);
      expect(opened.html).toContain("redirect_uri");
    }
  });

  it("a native client's loopback redirect may change port (RFC 8252); a web client's may not", async () => {
    const native = await new HandDrivenClient(stack.url).register({ application_type: "native" });
    const web = await new HandDrivenClient(stack.url).register({ application_type: "web" });
    const { challenge } = pkcePair();
    const otherPort = "http://127.0.0.1:9123/callback";
    const nativeOpened = await native.open(native.authorizationUrl(challenge, { redirect_uri: otherPort }));
    expect("left" in nativeOpened ? nativeOpened.left.href : (nativeOpened as { status: number }).status).toBe(200);
    const webOpened = await web.open(web.authorizationUrl(challenge, { redirect_uri: otherPort }));
    expect("left" in webOpened ? webOpened.left.href : webOpened.status).toBe(400);
  });

  it("PKCE is required and only S256: a missing challenge or plain is refused on a page, never redirected to the client (no open redirector)", async () => {
    const { challenge } = pkcePair();
    for (const overrides of [{ code_challenge: undefined, code_challenge_method: undefined }, { code_challenge_method: "plain" }]) {
      const opened = await client.open(client.authorizationUrl(challenge, overrides));
      if ("left" in opened) throw new Error(`redirected to ${opened.left.href}`);
      expect(opened.status).toBe(400);
      expect(opened.html).toContain("invalid_request");
    }
  });

  it("a wrong or missing PKCE verifier gets invalid_grant", async () => {
    const { verifier, challenge } = pkcePair();
    const code = (await client.authorize(challenge, API_KEY)).searchParams.get("code") as string;
    const wrong = await client.exchange(code, pkcePair().verifier);
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe("invalid_grant");
    const second = pkcePair();
    const code2 = (await client.authorize(second.challenge, API_KEY)).searchParams.get("code") as string;
    const missing = await client.token({ grant_type: "authorization_code", code: code2, redirect_uri: client.redirectUri, resource: client.resource });
    expect(missing.status).toBe(400);
    expect(["invalid_grant", "invalid_request"]).toContain(missing.body.error);
    expect(verifier).not.toBe(second.verifier);
  });

  it("a replayed code gets invalid_grant and revokes what the code gave", async () => {
    const { verifier, challenge } = pkcePair();
    const code = (await client.authorize(challenge, API_KEY)).searchParams.get("code") as string;
    const first = await client.exchange(code, verifier);
    expect(first.status).toBe(200);
    expect((await client.listTools(first.body.access_token)).status).toBe(200);
    const replay = await client.exchange(code, verifier);
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe("invalid_grant");
    expect((await client.listTools(first.body.access_token)).status).toBe(401);
  });

  it("a token for another resource is refused: at the token endpoint (invalid_target) and at /oauth/mcp", async () => {
    const { verifier, challenge } = pkcePair();
    const code = (await client.authorize(challenge, API_KEY)).searchParams.get("code") as string;
    const other = await client.exchange(code, verifier, { resource: "https://other.example/mcp" });
    expect(other.status).toBe(400);
    expect(other.body.error).toBe("invalid_target");
    const opened = await client.open(client.authorizationUrl(challenge, { resource: "https://other.example/mcp" }));
    if ("left" in opened) throw new Error(`redirected to ${opened.left.href}`);
    expect(opened.status).toBe(400);
    expect(opened.html).toContain("invalid_target");
    // A token this adapter issued at another of its origins (localhost) is not for 127.0.0.1's resource.
    const port = new URL(stack.url).port;
    const elsewhere = await new HandDrivenClient(`http://localhost:${port}`).register();
    const { access } = await elsewhere.tokens(API_KEY);
    expect((await elsewhere.listTools(access)).status).toBe(200);
    const refused = await client.listTools(access);
    expect(refused.status).toBe(401);
    expect(refused.challenge).toContain('error="invalid_token"');
    expect(refused.challenge).toContain(`resource_metadata="${stack.url}/.well-known/oauth-protected-resource/oauth/mcp"`);
  });

  it("no token, or an unknown one, gets the 401 that starts discovery; a static key is not a token", async () => {
    const none = await fetch(client.resource, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${stack.url}/.well-known/oauth-protected-resource/oauth/mcp", scope="workspace"`);
    const key = await client.listTools(API_KEY);
    expect(key.status).toBe(401);
    expect(key.challenge).toContain('error="invalid_token"');
  });

  it("an access token sent to /mcp as a key is refused there, never passed upstream", async () => {
    const { access, refresh } = await client.tokens(API_KEY);
    expect(access.startsWith("wsoauth_")).toBe(true);
    expect(refresh.startsWith("wsoauth_")).toBe(true);
    const seen: string[] = [];
    const record = (request: { headers: Record<string, unknown> }) => seen.push(String(request.headers.authorization ?? ""));
    stack.workspace.server.on("request", record);
    try {
      const asKey = await client.listTools(access, `${stack.url}/mcp`);
      expect(asKey.status).toBe(401);
      expect(asKey.body).toContain("accepted at /oauth/mcp only");
      const chat = await fetch(`${stack.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${access}`, "service-workspace": "acme", "content-type": "application/json" },
        body: JSON.stringify({ model: "ask", messages: [{ role: "user", content: "hi" }] }),
      });
      expect(chat.status).toBe(401);
    } finally {
      stack.workspace.server.off("request", record);
    }
    expect(seen.some((header) => header.includes(access))).toBe(false);
  });

  it("refresh tokens rotate: a rotated-out one gets invalid_grant (and ends the grant), a revoked one too", async () => {
    const { refresh } = await client.tokens(API_KEY);
    const rotated = await client.refresh(refresh);
    expect(rotated.status).toBe(200);
    expect(rotated.body.refresh_token).not.toBe(refresh);
    expect((await client.listTools(rotated.body.access_token)).status).toBe(200);
    const reused = await client.refresh(refresh);
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe("invalid_grant");
    // Reuse of a rotated-out token revokes the grant: its newer tokens go too.
    expect((await client.refresh(rotated.body.refresh_token)).body.error).toBe("invalid_grant");
    expect((await client.listTools(rotated.body.access_token)).status).toBe(401);

    const second = await client.tokens(API_KEY);
    expect(await client.revoke(second.refresh)).toBe(200);
    expect((await client.refresh(second.refresh)).body.error).toBe("invalid_grant");
    expect((await client.listTools(second.access)).status).toBe(401);
  });

  it("a key the workspace refuses on the tool call itself is a 401 invalid_token (the grant revoked), not a tool error", async () => {
    const { access, refresh } = await client.tokens(API_KEY);
    // Checked at the first request: the grant's key works; then it is rotated upstream before the next check.
    expect((await client.listTools(access)).status).toBe(200);
    stack.workspace.control.inject({ on: "create", kind: "status", status: 401 });
    const response = await fetch(`${stack.url}/oauth/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${access}`, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "ask", arguments: { question: "How much annual leave do I get?" } } }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toMatch(/^Bearer resource_metadata="[^"]+", scope="workspace", error="invalid_token"/);
    const body = (await response.json()) as { id: number; error: { message: string } };
    expect(body.id).toBe(7);
    expect(body.error.message).toMatch(/no longer accepts the key/);
    // The grant is gone: its access token and refresh token with it, so the client authorizes again.
    expect((await client.listTools(access)).status).toBe(401);
    expect((await client.refresh(refresh)).body.error).toBe("invalid_grant");
  });

  it("a revoked access token is refused at once, with every token of its grant", async () => {
    const { access, refresh } = await client.tokens(API_KEY);
    const other = await new HandDrivenClient(stack.url).register();
    // Only the client a token was issued to may revoke it (RFC 7009 §2.1): another's attempt changes nothing.
    expect(await other.revoke(access)).toBe(200);
    expect((await client.listTools(access)).status).toBe(200);
    expect(await client.revoke(access)).toBe(200);
    expect((await client.listTools(access)).status).toBe(401);
    expect((await client.refresh(refresh)).body.error).toBe("invalid_grant");
  });
});

describe("OAuth token lifetimes", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ MCP_OAUTH: "on", OAUTH_ACCESS_TOKEN_TTL_SECONDS: "1", OAUTH_REFRESH_TOKEN_TTL_SECONDS: "8" });
  });
  afterAll(() => stack?.close());

  it("an expired access token, then an expired refresh token, are refused", async () => {
    const client = await new HandDrivenClient(stack.url).register();
    const { access, refresh } = await client.tokens(API_KEY);
    const deadline = Date.now() + 60_000;
    let status = 200;
    while (status === 200 && Date.now() < deadline) status = (await client.listTools(access)).status;
    expect(status).toBe(401);
    let error: unknown;
    let current = refresh;
    // Each refresh rotates; the grant (and every refresh token of it) ends 8 s after consent.
    while (error === undefined && Date.now() < deadline) {
      const refreshed = await client.refresh(current);
      if (refreshed.status === 200) current = refreshed.body.refresh_token;
      else error = refreshed.body.error;
    }
    expect(error).toBe("invalid_grant");
  });
});

describe("OAuth behind PUBLIC_URL (https)", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ MCP_OAUTH: "on", PUBLIC_URL: "https://mcp.example.test" });
  });
  afterAll(() => stack?.close());

  it("names the public https addresses and sets __Host- cookies", async () => {
    const metadata = (await (await fetch(`${stack.url}/.well-known/oauth-protected-resource/oauth/mcp`)).json()) as Record<string, unknown>;
    expect(metadata.resource).toBe("https://mcp.example.test/oauth/mcp");
    expect(metadata.authorization_servers).toEqual(["https://mcp.example.test/oauth"]);
    const server = (await (await fetch(`${stack.url}/.well-known/oauth-authorization-server/oauth`)).json()) as Record<string, unknown>;
    expect(server.issuer).toBe("https://mcp.example.test/oauth");
    expect(server.token_endpoint).toBe("https://mcp.example.test/oauth/token");
    const client = await new HandDrivenClient(stack.url).register();
    const { challenge } = pkcePair();
    const authorize = client.authorizationUrl(challenge, { resource: "https://mcp.example.test/oauth/mcp" });
    const started = await fetch(authorize, { redirect: "manual" });
    expect(started.status).toBe(303);
    const location = new URL(started.headers.get("location") as string, "https://mcp.example.test");
    expect(location.pathname).toMatch(/^\/oauth\/interaction\//);
    const cookies = started.headers.getSetCookie().join("; ");
    const page = await fetch(`${stack.url}${location.pathname}`, { headers: { cookie: started.headers.getSetCookie().map((line) => line.split(";")[0]).join("; ") } });
    expect(page.status).toBe(200);
    const csrf = page.headers.getSetCookie().join("; ");
    expect(csrf).toMatch(/__Host-oauth_csrf=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Secure/);
    expect(cookies).toMatch(/; secure/i);
  });
});
