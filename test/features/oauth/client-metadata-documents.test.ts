import { Client, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWith, OPENSSL } from "../../helpers/external-programs.js";
import { codexDocument, CODEX_CLIENT_ID, startCanary, startDocumentHost } from "../../helpers/metadata-documents.js";
import { consent, HandDrivenClient, MemoryOAuthClient, pkcePair } from "../../helpers/oauth-client.js";
import { API_KEY, type Stack, startStack } from "../../helpers/start-stack.js";

/** An authorization request by a document's URL: the page it ends on (never a redirect to the client). */
async function authorizeAs(stack: Stack, clientId: string, redirectUri = "http://127.0.0.1:8976/callback") {
  const hand = new HandDrivenClient(stack.url, redirectUri);
  hand.clientId = clientId;
  const opened = await hand.open(hand.authorizationUrl(pkcePair().challenge));
  if ("left" in opened) throw new Error(`redirected to ${opened.left.href}`);
  return opened;
}

describeWith(OPENSSL, "client ID metadata documents through the production fetch (a local HTTPS server stands in for chatgpt.com)", () => {
  let host: Awaited<ReturnType<typeof startDocumentHost>>;
  let stack: Stack;
  beforeAll(async () => {
    host = await startDocumentHost();
    host.documents.set("/oauth/codex/client.json", { body: codexDocument(), headers: { "cache-control": "max-age=60" } });
    host.documents.set("/big.json", { body: { ...codexDocument("https://chatgpt.com/big.json"), logo_text: "x".repeat(10_000) } });
    host.documents.set("/slow.json", { silent: true });
    host.documents.set("/moved.json", { status: 302, headers: { location: "https://chatgpt.com/oauth/codex/client.json" } });
    host.documents.set("/http-redirect.json", { body: { ...codexDocument("https://chatgpt.com/http-redirect.json"), application_type: "web", redirect_uris: ["http://evil.example/cb"] } });
    stack = await startStack({ MCP_OAUTH: "on" }, {}, { oauthMetadataFetch: host.fetchOptions });
  });
  afterAll(async () => {
    await stack?.close();
    await host?.close();
  });

  it("positive control: the MCP SDK client identified by Codex's document URL gets the consent page (verified), a code and tools; no registration", async () => {
    const metadata = (await (await fetch(`${stack.url}/.well-known/oauth-authorization-server/oauth`)).json()) as Record<string, unknown>;
    expect(metadata.client_id_metadata_document_supported).toBe(true);
    expect(metadata.token_endpoint_auth_methods_supported).toEqual(["none"]);
    const page = await authorizeAs(stack, CODEX_CLIENT_ID);
    expect(page.status).toBe(200);
    expect(page.html).toContain("verified: its description comes from <code>chatgpt.com</code>");
    const url = `${stack.url}/oauth/mcp`;
    const provider = new MemoryOAuthClient({}, CODEX_CLIENT_ID);
    const seen: string[] = [];
    const recording = async (input: string | URL | Request, init?: RequestInit) => {
      seen.push(String(input));
      return fetch(input, init);
    };
    const first = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider, fetch: recording });
    await expect(new Client({ name: "cimd", version: "1" }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.authorizationUrl?.searchParams.get("client_id")).toBe(CODEX_CLIENT_ID);
    expect(seen.some((address) => address.includes("/oauth/register"))).toBe(false);
    await first.finishAuth((await consent(provider.authorizationUrl as URL, API_KEY, "acme")).searchParams);
    const client = new Client({ name: "cimd", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }));
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await client.close();
    expect(host.requested).toContain("chatgpt.com/oauth/codex/client.json");
  });

  it("refuses an oversized document, one that does not come in time, a redirect, and one with a plain-http redirect URI", async () => {
    for (const path of ["/big.json", "/slow.json", "/moved.json", "/http-redirect.json"]) {
      const refused = await authorizeAs(stack, `https://chatgpt.com${path}`, path === "/http-redirect.json" ? "http://evil.example/cb" : undefined);
      expect([path, refused.status]).toEqual([path, 400]);
      expect(refused.html).toMatch(/invalid_client|invalid_redirect_uri/);
    }
  });

  it("remembers a failure: the same failing document is not fetched again for a minute", async () => {
    const before = host.requested.filter((request) => request.endsWith("/missing.json")).length;
    for (let attempt = 0; attempt < 3; attempt++) expect((await authorizeAs(stack, "https://chatgpt.com/missing.json")).status).toBe(400);
    expect(host.requested.filter((request) => request.endsWith("/missing.json")).length - before).toBe(1);
  });

  it("fetches only from the allowed hosts (well-known clients' by default)", async () => {
    const refused = await authorizeAs(stack, "https://documents.example/client.json");
    expect(refused.status).toBe(400);
    expect(refused.html).toContain("fetch not allowed");
  });

  it("fetches at most 10 documents a minute from one host", async () => {
    const counts: number[] = [];
    for (let index = 0; index < 12; index++) {
      const before = host.requested.length;
      await authorizeAs(stack, `https://claude.ai/rate-${index}.json`);
      counts.push(host.requested.length - before);
    }
    expect(counts.filter((count) => count > 0).length).toBeLessThanOrEqual(10);
    expect(counts.slice(-1)).toEqual([0]);
  });
});

describeWith(OPENSSL, "client ID metadata documents: every form of a special-use address is refused with no connection made", () => {
  let canary: Awaited<ReturnType<typeof startCanary>>;
  let stack: Stack;
  beforeAll(async () => {
    canary = await startCanary();
    // Any host allowed, so that only the address check stands between a client id and the canary.
    // The name resolution is the system's, but for names that resolve (as an attacker's DNS would) to loopback.
    const rebinding = new Map<string, string[]>([["rebind.attacker.test", ["127.0.0.1"]], ["mixed.attacker.test", ["104.18.32.47", "127.0.0.1"]], ["v6.attacker.test", ["::ffff:127.0.0.1"]]]);
    stack = await startStack({ MCP_OAUTH: "on", OAUTH_CLIENT_METADATA_HOSTS: "*" }, {}, {
      oauthMetadataFetch: {
        resolve: async (hostname) => {
          const addresses = rebinding.get(hostname);
          if (!addresses) throw new Error(`no test resolution for ${hostname}`);
          return addresses.map((address) => ({ address }));
        },
      },
    });
  });
  afterAll(async () => {
    await stack?.close();
    await canary?.close();
  });

  it("refuses them all as invalid_client, and the canary sees no connection", async () => {
    const port = canary.port;
    const forms = [
      `https://127.0.0.1:${port}/x`, `https://[::ffff:127.0.0.1]:${port}/x`, `https://[::ffff:7f00:1]:${port}/x`, `https://2130706433:${port}/x`,
      `https://0x7f.1:${port}/x`, `https://0177.0.0.1:${port}/x`, `https://[64:ff9b::7f00:1]:${port}/x`, `https://[::1]:${port}/x`,
      "https://169.254.169.254/latest", "https://[fd00::1]/x", "https://10.0.0.1/x",
      `https://rebind.attacker.test:${port}/x`, `https://mixed.attacker.test:${port}/x`, `https://v6.attacker.test:${port}/x`,
    ];
    for (const clientId of forms) {
      const refused = await authorizeAs(stack, clientId);
      expect([clientId, refused.status]).toEqual([clientId, 400]);
      expect(refused.html).toContain("invalid_client");
    }
    expect(canary.connections()).toBe(0);
  });

  it("refuses sector_identifier_uri at registration, fetching nothing", async () => {
    const response = await fetch(`${stack.url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: ["https://app.example/cb"], sector_identifier_uri: `https://127.0.0.1:${canary.port}/s`, token_endpoint_auth_method: "none" }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe("invalid_client_metadata");
    expect(canary.connections()).toBe(0);
  });
});
