import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningWorkspace, startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import { FormBrowser, HandDrivenClient, pkcePair } from "../../helpers/oauth-client.js";
import { freePort } from "../../helpers/redis-server.js";
import { API_KEY, FIXTURE_DOCUMENTS, type RunningAdapter, startAdapter } from "../../helpers/start-stack.js";

/** How the stub provider makes the next ID token: the claims and header to change, or a symmetric key to sign with. */
interface Scenario {
  claims?: (claims: JWTPayload) => JWTPayload;
  hs256?: boolean;
  /** The `iss` the redirect back carries (none when undefined). */
  iss?: string;
}

/**
 * A stub OpenID Connect provider whose ID tokens the test shapes: discovery, an authorization
 * endpoint that sends the browser straight back (remembering the nonce), a token endpoint that
 * answers with the scenario's ID token, and its JWKS.
 */
async function startStubIdp() {
  const { publicKey, privateKey } = await generateKeyPair("ES256");
  const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "ES256", use: "sig" };
  let scenario: Scenario = {};
  let nonce = "";
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", base);
    const json = (body: unknown) => {
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify(body));
    };
    if (url.pathname === "/.well-known/openid-configuration") {
      json({ issuer: base, authorization_endpoint: `${base}/authorize`, token_endpoint: `${base}/token`, jwks_uri: `${base}/jwks`, authorization_response_iss_parameter_supported: true });
    } else if (url.pathname === "/jwks") {
      json({ keys: [jwk] });
    } else if (url.pathname === "/authorize") {
      nonce = url.searchParams.get("nonce") ?? "";
      const back = new URL(url.searchParams.get("redirect_uri") ?? "");
      back.searchParams.set("code", "stub-code");
      back.searchParams.set("state", url.searchParams.get("state") ?? "");
      back.searchParams.set("iss", scenario.iss ?? base);
      response.statusCode = 302;
      response.setHeader("location", back.href);
      response.end();
    } else if (url.pathname === "/token") {
      void (async () => {
        const now = Math.floor(Date.now() / 1000);
        const standard: JWTPayload = { iss: base, aud: "workspace-adapter", sub: "alice", iat: now, exp: now + 300, nonce, email: "alice@example.com", email_verified: true };
        const claims = scenario.claims ? scenario.claims(standard) : standard;
        const token = scenario.hs256
          ? await new SignJWT(claims).setProtectedHeader({ alg: "HS256", kid: "k1" }).sign(new TextEncoder().encode("a-shared-secret-an-attacker-knows-32b"))
          : await new SignJWT(claims).setProtectedHeader({ alg: "ES256", kid: "k1" }).sign(privateKey);
        json({ access_token: "stub", token_type: "Bearer", id_token: token });
      })();
    } else {
      response.statusCode = 404;
      response.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    server,
    use(next: Scenario) {
      scenario = next;
    },
  };
}

describe("the team set-up against a stub identity provider: which ID tokens are refused", () => {
  let workspace: RunningWorkspace;
  let adapter: RunningAdapter;
  let idp: Awaited<ReturnType<typeof startStubIdp>>;
  let client: HandDrivenClient;

  beforeAll(async () => {
    workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme", "globex"], apiKeys: [API_KEY], stepDelayMs: 10 });
    idp = await startStubIdp();
    adapter = await startAdapter(workspace.url, {
      PORT: String(await freePort()),
      MCP_OAUTH: "on",
      WORKSPACE_API_KEY: API_KEY,
      ADAPTER_API_KEYS: "sk-a-client-key",
      OAUTH_IDP_ISSUER: idp.base,
      OAUTH_IDP_CLIENT_ID: "workspace-adapter",
      OAUTH_IDP_ALLOWED_EMAIL_DOMAINS: "example.com",
      OAUTH_IDP_GROUP_WORKSPACES: "eng=globex",
    });
    client = await new HandDrivenClient(adapter.url).register();
  });
  afterAll(async () => {
    await adapter?.close();
    idp?.server.closeAllConnections();
    idp?.server.close();
    await workspace?.close();
  });

  /** One sign-in with the scenario: the status of the callback's answer and its page (or where it sends the browser). */
  async function signIn(scenario: Scenario): Promise<{ status: number; text: string; location: string | null; browser: FormBrowser }> {
    idp.use(scenario);
    const browser = new FormBrowser();
    const consentPage = await browser.follow(client.authorizationUrl(pkcePair().challenge), adapter.url);
    if ("left" in consentPage) throw new Error("no consent page");
    const toIdp = await browser.submit(consentPage.url, await consentPage.page.text(), adapter.url, { action: "sign-in" });
    if (!("left" in toIdp)) throw new Error("not sent to the identity provider");
    const back = await browser.follow(toIdp.left, idp.base);
    if (!("left" in back)) throw new Error("stayed at the identity provider");
    const callback = await browser.request(back.left);
    return { status: callback.status, text: await callback.text(), location: callback.headers.get("location"), browser };
  }

  it("accepts a good ID token from an allowed domain (the control), and its groups narrow the workspaces only when mapped", async () => {
    const choices = async (scenario: Scenario) => {
      const good = await signIn(scenario);
      expect(good.status).toBe(303);
      expect(good.location).toMatch(/^\/oauth\/interaction\//);
      const page = await good.browser.request(new URL(good.location as string, adapter.url));
      return [...(await page.text()).matchAll(/name="workspace" value="([^"]+)"/g)].map((match) => match[1]);
    };
    // OAUTH_IDP_GROUP_WORKSPACES maps eng to globex: a member of eng picks globex only; someone in no mapped group, nothing.
    expect(await choices({ claims: (claims) => ({ ...claims, groups: ["eng"] }) })).toEqual(["globex"]);
    expect(await choices({})).toEqual([]);
  });

  const refusals: [string, Scenario][] = [
    ["expired", { claims: (claims) => ({ ...claims, exp: Math.floor(Date.now() / 1000) - 600, iat: Math.floor(Date.now() / 1000) - 900 }) }],
    ["for another audience", { claims: (claims) => ({ ...claims, aud: "another-client" }) }],
    ["with another nonce", { claims: (claims) => ({ ...claims, nonce: "not-this-sign-in" }) }],
    ["without exp", { claims: ({ exp: _exp, ...claims }) => claims }],
    ["without iat", { claims: ({ iat: _iat, ...claims }) => claims }],
    ["signed with HS256 (a shared secret)", { hs256: true }],
    ["from another issuer", { claims: (claims) => ({ ...claims, iss: "https://other.example" }) }],
    ["with several audiences and no azp", { claims: (claims) => ({ ...claims, aud: ["workspace-adapter", "another-client"] }) }],
    ["with another azp", { claims: (claims) => ({ ...claims, azp: "another-client" }) }],
    ["of a person outside the allow-list (another domain)", { claims: (claims) => ({ ...claims, email: "mallory@elsewhere.example" }) }],
    ["of an unverified email", { claims: (claims) => ({ ...claims, email_verified: false }) }],
    ["coming back with another iss", { iss: "https://other.example" }],
  ];
  for (const [what, scenario] of refusals) {
    it(`refuses an ID token ${what}: a 400 page, no grant`, async () => {
      const refused = await signIn(scenario);
      expect(refused.status).toBe(400);
      expect(refused.location).toBeNull();
      expect(refused.text).toContain("The sign-in did not go through");
    });
  }

  it("keeps two people's queries apart under the deployment's one key: another's query_id is a tool error, and nothing is asked (docs/governance.md#whose-query-it-is)", async () => {
    /** An access token of the person the scenario signs in, for globex (their group's workspace). */
    const tokenOf = async (person: string) => {
      const { verifier, challenge } = pkcePair();
      idp.use({ claims: (claims) => ({ ...claims, sub: person, email: `${person}@example.com`, groups: ["eng"] }) });
      const browser = new FormBrowser();
      const consentPage = await browser.follow(client.authorizationUrl(challenge), adapter.url);
      if ("left" in consentPage) throw new Error("no consent page");
      const toIdp = await browser.submit(consentPage.url, await consentPage.page.text(), adapter.url, { action: "sign-in" });
      if (!("left" in toIdp)) throw new Error("not sent to the identity provider");
      const back = await browser.follow(toIdp.left, idp.base);
      if (!("left" in back)) throw new Error("stayed at the identity provider");
      const chooser = await browser.follow(back.left, adapter.url);
      if ("left" in chooser) throw new Error("no workspace step");
      const done = await browser.submit(chooser.url, await chooser.page.text(), adapter.url, { workspace: "globex", action: "allow" });
      if (!("left" in done)) throw new Error("no code");
      const tokens = await client.exchange(done.left.searchParams.get("code") as string, verifier);
      return `Bearer ${tokens.body.access_token as string}`;
    };
    const [alice, bob] = [await tokenOf("alice"), await tokenOf("bob")];
    const ask = async (who: string, queryId?: string) => {
      const called = await client.callTool(who, { name: "ask", arguments: { question: "What is the travel policy?", ...(queryId ? { query_id: queryId } : {}) } }, `${adapter.url}/oauth/mcp`);
      const text = called.body.startsWith("event:") ? called.body.split("\n").find((line) => line.startsWith("data: "))?.slice(6) ?? "" : called.body;
      return (JSON.parse(text) as { result: { isError?: boolean; structuredContent?: { query_id: string }; content: { text: string }[] } }).result;
    };
    const queryId = (await ask(alice)).structuredContent?.query_id as string;
    const creates = () => workspace.control.creates.filter((create) => create.body.id === queryId).length;
    const refused = await ask(bob, queryId);
    expect(refused.isError).toBe(true);
    expect(refused.content[0]?.text).toMatch(/No query .* that this caller started/);
    expect(creates()).toBe(1);
    expect((await ask(alice, queryId)).isError).toBeFalsy();
    expect(creates()).toBe(2);
  });

  it("refuses a callback whose state is not this sign-in's", async () => {
    idp.use({});
    const browser = new FormBrowser();
    const consentPage = await browser.follow(client.authorizationUrl(pkcePair().challenge), adapter.url);
    if ("left" in consentPage) throw new Error("no consent page");
    const toIdp = await browser.submit(consentPage.url, await consentPage.page.text(), adapter.url, { action: "sign-in" });
    if (!("left" in toIdp)) throw new Error("not sent to the identity provider");
    const forged = await browser.request(`${adapter.url}/oauth/idp/callback?code=stub-code&state=forged&iss=${encodeURIComponent(idp.base)}`);
    expect(forged.status).toBe(400);
    expect(await forged.text()).toContain("state does not match");
  });
});
