import { request } from "node:http";
import { postFrom } from "../../helpers/post-from.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEY_CHECK_INTERVAL_MS } from "../../../src/oauth/oauth-edge.js";
import { systemClock } from "../../../src/util/clock.js";
import { FormBrowser, HandDrivenClient, pkcePair, REDIRECT_URI } from "../../helpers/oauth-client.js";
import { API_KEY, type Stack, startStack } from "../../helpers/start-stack.js";

/**
 * The black-box checks of the OAuth security review (docs/mcp-oauth.md#what-the-tests-hold), each
 * against a running adapter; the numbers are the review's. Those the other files hold are named there.
 */

const registration = (extra: Record<string, unknown> = {}) => JSON.stringify({ redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none", ...extra });

async function register(base: string, body: Record<string, unknown>): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${base}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

describe("the OAuth review's black-box checks against a running adapter", () => {
  let stack: Stack;
  let client: HandDrivenClient;
  beforeAll(async () => {
    stack = await startStack({ MCP_OAUTH: "on", OAUTH_REGISTRATIONS_PER_HOUR: "100" });
    client = await new HandDrivenClient(stack.url).register();
  });
  afterAll(() => stack?.close());

  it("2: a hostile Host or X-Forwarded-Host names no other resource; a loopback name with a trailing dot is not served", async () => {
    const port = new URL(stack.url).port;
    const asked = await fetch(`${stack.url}/.well-known/oauth-protected-resource/oauth/mcp`, { headers: { "x-forwarded-host": "evil.example" } });
    expect(((await asked.json()) as { resource: string }).resource).toBe(`${stack.url}/oauth/mcp`);
    for (const host of ["evil.example", `localhost.:${port}`]) {
      const answer = await new Promise<number>((resolve, reject) => {
        request({ host: "127.0.0.1", port, path: "/.well-known/oauth-protected-resource/oauth/mcp", headers: { host } }, (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        }).on("error", reject).end();
      });
      // Refused at the edge before OAuth sees it (the embedded workspace answers loopback names only:
      // docs/operating.md#a-local-workspace-stays-local); OAuth's own rule would make it a 404.
      expect([host, answer]).toEqual([host, 421]);
    }
  });

  it("3: the metadata names S256 only, the iss parameter, no introspection, userinfo or pushed authorization endpoint", async () => {
    const metadata = (await (await fetch(`${stack.url}/.well-known/oauth-authorization-server/oauth`)).json()) as Record<string, unknown>;
    expect(metadata.issuer).toBe(`${stack.url}/oauth`);
    expect(metadata.code_challenge_methods_supported).toEqual(["S256"]);
    expect(metadata.authorization_response_iss_parameter_supported).toBe(true);
    for (const absent of ["introspection_endpoint", "userinfo_endpoint", "pushed_authorization_request_endpoint"]) expect(metadata).not.toHaveProperty(absent);
    expect(metadata.token_endpoint_auth_methods_supported).toEqual(["none"]);
  });

  it("4: registrations through /oauth/REGISTER and /oauth/register/ are counted like /oauth/register", async () => {
    const limited = await startStack({ MCP_OAUTH: "on", OAUTH_REGISTRATIONS_PER_HOUR: "3" });
    try {
      await registrationsCounted(limited);
    } finally {
      await limited.close();
    }
  });

  async function registrationsCounted(stack: Stack) {
    for (const [path, address] of [["/oauth/REGISTER", "127.0.0.5"], ["/oauth/register/", "127.0.0.6"], ["/oauth/Register", "127.0.0.7"]] as const) {
      const statuses: number[] = [];
      for (let index = 0; index < 4; index++) statuses.push((await postFrom(`${stack.url}${path}`, registration(), address)).status);
      expect([path, statuses]).toEqual([path, [201, 201, 201, 429]]);
    }
    const refused = await postFrom(`${stack.url}/oauth/register`, registration(), "127.0.0.5");
    expect(refused.status).toBe(429);
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
    expect(JSON.parse(refused.body)).toMatchObject({ error: "too_many_requests" });
  }

  it("5, 6, 7: plain-http, fragment and javascript: redirect URIs, 500 URIs, a 10,000-character name, a confidential client and an oversized body are refused", async () => {
    const refusals: [Record<string, unknown>, string][] = [
      [{ redirect_uris: ["http://evil.example/cb"] }, "invalid_redirect_uri"],
      [{ redirect_uris: ["https://x.example/cb#f"] }, "invalid_redirect_uri"],
      [{ application_type: "native", redirect_uris: ["javascript:alert(1)"] }, "invalid_redirect_uri"],
      [{ redirect_uris: Array.from({ length: 500 }, (_, index) => `https://x.example/cb${index}`) }, "invalid_client_metadata"],
      [{ redirect_uris: Array.from({ length: 11 }, (_, index) => `https://x.example/cb${index}`) }, "invalid_redirect_uri"],
      [{ redirect_uris: ["https://x.example/cb"], client_name: "n".repeat(10_000) }, "invalid_client_metadata"],
      [{ redirect_uris: ["https://x.example/cb"], token_endpoint_auth_method: "client_secret_basic" }, "invalid_client_metadata"],
      [{ redirect_uris: ["https://x.example/cb"], software_statement_padding: "p".repeat(9000) }, "invalid_client_metadata"],
    ];
    for (const [body, error] of refusals) {
      const answer = await register(stack.url, { token_endpoint_auth_method: "none", ...body });
      expect([JSON.stringify(body).slice(0, 60), answer.status, answer.json.error]).toEqual([JSON.stringify(body).slice(0, 60), 400, error]);
    }
    // http on loopback stays allowed (native and CLI clients).
    expect((await register(stack.url, { redirect_uris: ["http://127.0.0.1:3000/callback", "http://[::1]/cb", "http://localhost/cb"], token_endpoint_auth_method: "none" })).status).toBe(201);
  });

  it("8, 9: errors before consent (no PKCE, prompt=none, a bad scope) are a page, never a redirect to a registered attacker URI", async () => {
    const evil = await new HandDrivenClient(stack.url, "https://evil.example/cb").register();
    const { challenge } = pkcePair();
    for (const overrides of [{ code_challenge: undefined, code_challenge_method: undefined }, { prompt: "none" }, { resource: "https://other.example/mcp" }, { response_type: "token" }]) {
      const answer = await fetch(evil.authorizationUrl(challenge, overrides), { redirect: "manual" });
      expect([JSON.stringify(overrides), answer.status, answer.headers.get("location")]).toEqual([JSON.stringify(overrides), 400, null]);
      expect(answer.headers.get("content-type")).toMatch(/text\/html/);
    }
    // A denial at consent still goes back to the client (the user decided).
    const opened = await client.open(client.authorizationUrl(challenge));
    if ("left" in opened) throw new Error("no page");
    const denied = await client.browser.submit(opened.pageUrl, opened.html, stack.url, { action: "deny" });
    if (!("left" in denied)) throw new Error("a denial did not go back to the client");
    expect(denied.left.searchParams.get("error")).toBe("access_denied");
  });

  it("10: another port of a web client, a trailing slash, a query or an upper-case scheme are never redirected to", async () => {
    const { challenge } = pkcePair();
    for (const redirectUri of ["http://127.0.0.1:8977/callback", `${REDIRECT_URI}/`, `${REDIRECT_URI}?x=1`, "HTTP://127.0.0.1:8976/callback"]) {
      const answer = await fetch(client.authorizationUrl(challenge, { redirect_uri: redirectUri }), { redirect: "manual" });
      expect([redirectUri, answer.status, answer.headers.get("location")]).toEqual([redirectUri, 400, null]);
    }
  });

  it("12, 13: two concurrent redemptions of one code, or of one refresh token: at most one wins, and the grant is revoked", async () => {
    const { verifier, challenge } = pkcePair();
    const code = (await client.authorize(challenge, API_KEY)).searchParams.get("code") as string;
    const both = await Promise.all([client.exchange(code, verifier), client.exchange(code, verifier)]);
    expect(both.filter((answer) => answer.status === 200).length).toBeLessThanOrEqual(1);
    for (const answer of both.filter((one) => one.status === 200)) expect((await client.listTools(answer.body.access_token)).status).toBe(401);
    const { refresh, access } = await client.tokens(API_KEY);
    const refreshed = await Promise.all([client.refresh(refresh), client.refresh(refresh)]);
    expect(refreshed.filter((answer) => answer.status === 200).length).toBeLessThanOrEqual(1);
    for (const answer of refreshed.filter((one) => one.status === 200)) {
      expect((await client.refresh(answer.body.refresh_token)).body.error).toBe("invalid_grant");
      expect((await client.listTools(answer.body.access_token)).status).toBe(401);
    }
    expect((await client.listTools(access)).status).toBe(401);
  });

  it("15: an access token in the query string is not a bearer token", async () => {
    const { access } = await client.tokens(API_KEY);
    const answer = await fetch(`${stack.url}/oauth/mcp?access_token=${access}`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) });
    expect(answer.status).toBe(401);
  });

  it("17: consent and cookies carry the protections (no framing, no caching, no referrer; HttpOnly, SameSite=Strict CSRF cookie)", async () => {
    const opened = await client.open(client.authorizationUrl(pkcePair().challenge));
    if ("left" in opened) throw new Error("no page");
    const page = await new FormBrowser().request(opened.pageUrl);
    expect(page.status).toBe(400); // another browser: no such authorization there
    const same = await client.browser.request(opened.pageUrl);
    expect(same.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(same.headers.get("x-frame-options")).toBe("DENY");
    expect(same.headers.get("cache-control")).toBe("no-store");
    expect(same.headers.get("referrer-policy")).toBe("no-referrer");
    expect(same.headers.getSetCookie().join(";")).toMatch(/oauth_csrf=[^;]+; Path=\/; HttpOnly; SameSite=Strict/);
  });

  it("19: a registered name is escaped, marked self-declared and cleaned; the code's host comes first, with a loopback warning", async () => {
    const named = await new HandDrivenClient(stack.url).register({ client_name: "\"><img src=x onerror=alert(1)>\u202eClaude\u200b (Anthropic) verified connector and a long name" });
    const opened = await named.open(named.authorizationUrl(pkcePair().challenge));
    if ("left" in opened) throw new Error("no page");
    expect(opened.html).not.toContain("<img");
    expect(opened.html).not.toContain("<script");
    expect(opened.html).toContain("&#34;&#62;&#60;img src=x onerror=alert(1)&#62;Claude (Anthropic)");
    expect(opened.html).not.toMatch(/[\u202e\u200b]/);
    expect(opened.html).toContain("self-declared, unverified");
    expect(opened.html).toContain("…");
    expect(opened.html.indexOf('class="host">127.0.0.1:8976')).toBeLessThan(opened.html.indexOf("Name it gives itself"));
    expect(opened.html).toContain("a program on this computer");
    expect(opened.html).toContain("plain http");
  });

  it("20: a key longer than 256 characters is refused without asking the workspace", async () => {
    const seen: string[] = [];
    const record = (incoming: { headers: Record<string, unknown> }) => seen.push(String(incoming.headers.authorization ?? ""));
    stack.workspace.server.on("request", record);
    try {
      const opened = await client.open(client.authorizationUrl(pkcePair().challenge));
      if ("left" in opened) throw new Error("no page");
      const answer = await client.browser.submit(opened.pageUrl, opened.html, stack.url, { key: `sk-${"k".repeat(16_000)}`, action: "continue" });
      if ("left" in answer) throw new Error("redirected");
      expect(answer.page.status).toBe(400);
    } finally {
      stack.workspace.server.off("request", record);
    }
    expect(seen.some((header) => header.includes("kkkk"))).toBe(false);
  });

  it("23: scope=openid workspace gives one consent, then a code (and an ID token); no scope at all gets the workspace scope", async () => {
    for (const scope of ["openid workspace", undefined, "openid workspace offline_access"]) {
      const { verifier, challenge } = pkcePair();
      const callback = await client.authorize(challenge, API_KEY, "acme", { scope });
      expect([scope, callback.origin + callback.pathname]).toEqual([scope, REDIRECT_URI]);
      const tokens = await client.exchange(callback.searchParams.get("code") as string, verifier);
      expect(tokens.status).toBe(200);
      expect(String(tokens.body.scope).split(" ")).toContain("workspace");
      if (scope?.includes("openid")) expect(tokens.body.id_token).toBeTypeOf("string");
      expect((await client.listTools(tokens.body.access_token)).status).toBe(200);
    }
  });

  it("a token without the workspace scope is answered 403 insufficient_scope, naming the scope to ask for", async () => {
    const { verifier, challenge } = pkcePair();
    const callback = await client.authorize(challenge, API_KEY, "acme", { scope: "openid" });
    const tokens = await client.exchange(callback.searchParams.get("code") as string, verifier);
    expect(tokens.status).toBe(200);
    const answer = await client.listTools(tokens.body.access_token);
    expect(answer.status).toBe(403);
    expect(answer.challenge).toMatch(/^Bearer error="insufficient_scope", scope="workspace", resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/oauth\/mcp"/);
  });

  it("a rotated workspace key ends its grants: the client is told invalid_token and asks again", async () => {
    let offset = 0;
    const clock = { ...systemClock, now: () => Date.now() + offset };
    const rotating = await startStack({ MCP_OAUTH: "on" }, { apiKeys: ["sk-rotated-soon", API_KEY] }, { clock });
    try {
      const hand = await new HandDrivenClient(rotating.url).register();
      const { access } = await hand.tokens("sk-rotated-soon");
      expect((await hand.listTools(access)).status).toBe(200);
      // The workspace stops accepting the key (as after a rotation); the grant's key is checked again after the interval.
      rotating.workspace.server.prependListener("request", (incoming: { headers: Record<string, string | undefined> }) => {
        if (incoming.headers.authorization === "Bearer sk-rotated-soon") incoming.headers.authorization = "Bearer sk-no-longer-valid";
      });
      offset += KEY_CHECK_INTERVAL_MS + 1000;
      const refused = await hand.listTools(access);
      expect(refused.status).toBe(401);
      expect(refused.challenge).toContain('error="invalid_token"');
      expect((await hand.listTools(access)).status).toBe(401);
    } finally {
      await rotating.close();
    }
  });
});
