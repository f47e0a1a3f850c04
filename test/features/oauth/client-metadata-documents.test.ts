import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";
import { Agent, fetch as undiciFetch } from "undici";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { OAuthFetch } from "../../../src/oauth/authorization-server.js";
import { describeWith, OPENSSL } from "../../helpers/external-programs.js";
import { consent, HandDrivenClient, MemoryOAuthClient, pkcePair, REDIRECT_URI } from "../../helpers/oauth-client.js";
import { API_KEY, type Stack, startStack } from "../../helpers/start-stack.js";
import { makeCertificates, type TestCertificates } from "../../helpers/test-certificates.js";

describeWith(OPENSSL, "client ID metadata documents, served over HTTPS on loopback with a test CA", () => {
  let certificates: TestCertificates;
  let documents: Server;
  let base: string;
  let allowed: Stack;
  let guarded: Stack;
  let agent: Agent;
  const requested: string[] = [];

  beforeAll(async () => {
    certificates = makeCertificates();
    documents = createServer({ cert: readFileSync(certificates.cert), key: readFileSync(certificates.key) }, (request, response) => {
      requested.push(request.url ?? "");
      const url = `${base}${request.url}`;
      const document = { client_id: url, client_name: "Metadata document client", redirect_uris: [REDIRECT_URI], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" };
      if (request.url === "/slow.json") return; // never answers: the server's time limit ends the wait
      response.setHeader("content-type", "application/json");
      if (request.url === "/big.json") response.end(JSON.stringify({ ...document, client_uri: undefined, logo_text: "x".repeat(10_000) }));
      else response.end(JSON.stringify(document));
    });
    await new Promise<void>((resolve) => documents.listen(0, "127.0.0.1", resolve));
    base = `https://localhost:${(documents.address() as AddressInfo).port}`;
    // The explicit, test-only allowance: reach loopback, trusting the test CA (the library's own fetch refuses both).
    agent = new Agent({ connect: { ca: readFileSync(certificates.ca) } });
    const loopbackFetch: OAuthFetch = (url, options) => undiciFetch(url, { ...(options as object), dispatcher: agent }) as unknown as Promise<Response>;
    allowed = await startStack({ MCP_OAUTH: "on" }, {}, { oauthMetadataFetch: loopbackFetch });
    guarded = await startStack({ MCP_OAUTH: "on" });
  });
  afterAll(async () => {
    documents?.closeAllConnections();
    documents?.close();
    await agent?.close();
    await allowed?.close();
    await guarded?.close();
    certificates?.remove();
  });

  it("the MCP SDK client identifies itself by its document: no registration, consent, tools", async () => {
    const metadata = (await (await fetch(`${allowed.url}/.well-known/oauth-authorization-server/oauth`)).json()) as Record<string, unknown>;
    expect(metadata.client_id_metadata_document_supported).toBe(true);
    expect(metadata.token_endpoint_auth_methods_supported).toContain("none");
    const url = `${allowed.url}/oauth/mcp`;
    const provider = new MemoryOAuthClient({}, `${base}/client.json`);
    const seen: string[] = [];
    const recording = async (input: string | URL | Request, init?: RequestInit) => {
      seen.push(String(input));
      return fetch(input, init);
    };
    const first = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider, fetch: recording });
    await expect(new Client({ name: "cimd", version: "1" }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.authorizationUrl?.searchParams.get("client_id")).toBe(`${base}/client.json`);
    expect(seen.some((address) => address.includes("/oauth/register"))).toBe(false);
    const callback = await consent(provider.authorizationUrl as URL, API_KEY, "acme");
    await first.finishAuth(callback.searchParams);
    const client = new Client({ name: "cimd", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }));
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await client.close();
    expect(requested).toContain("/client.json");
  });

  /** An authorization request by a document's URL: the page it ends on (never a redirect to the client). */
  async function authorizeAs(stack: Stack, clientId: string) {
    const hand = new HandDrivenClient(stack.url);
    hand.clientId = clientId;
    const opened = await hand.open(hand.authorizationUrl(pkcePair().challenge));
    if ("left" in opened) throw new Error(`redirected to ${opened.left.href}`);
    return opened;
  }

  it("refuses an oversized document, and one that does not come in time", async () => {
    const big = await authorizeAs(allowed, `${base}/big.json`);
    expect(big.status).toBe(400);
    expect(big.html).toContain("invalid_client");
    const slow = await authorizeAs(allowed, `${base}/slow.json`);
    expect(slow.status).toBe(400);
    expect(slow.html).toContain("invalid_client");
    expect(requested).toEqual(expect.arrayContaining(["/big.json", "/slow.json"]));
  });

  it("never fetches a document at a private or loopback address without the allowance, nor over http", async () => {
    const before = requested.length;
    for (const clientId of [`${base}/client.json`, `https://127.0.0.1:${new URL(base).port}/client.json`, "http://localhost:1/client.json"]) {
      const refused = await authorizeAs(guarded, clientId);
      expect(refused.status).toBe(400);
      expect(refused.html).toContain("invalid_client");
    }
    expect(requested.length).toBe(before);
  });
});
