import { Client, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consent, MemoryOAuthClient } from "../../helpers/oauth-client.js";
import { API_KEY, type Stack, startStack } from "../../helpers/start-stack.js";

/** Connects the SDK client through its own OAuth support, the consent given in a form-only browser. */
async function connectWithOAuth(url: string, key = API_KEY, workspace = "globex") {
  const provider = new MemoryOAuthClient();
  const info = { name: "oauth-test", version: "1.0.0" };
  const first = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  await expect(new Client(info).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
  expect(provider.authorizationUrl).toBeDefined();
  const callback = await consent(provider.authorizationUrl as URL, key, workspace);
  await first.finishAuth(callback.searchParams);
  const client = new Client(info);
  // A workspace named by the client is not the grant's: the grant's wins.
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider, requestInit: { headers: { "service-workspace": "acme" } } }));
  return { client, provider, callback };
}

describe("MCP over OAuth (MCP_OAUTH=on): the SDK client's own OAuth flow", () => {
  let stack: Stack;
  const upstreamKeys: string[] = [];
  const upstreamWorkspaces: string[] = [];
  beforeAll(async () => {
    stack = await startStack({ MCP_OAUTH: "on" });
    stack.workspace.server.on("request", (request: { headers: Record<string, unknown> }) => {
      upstreamKeys.push(String(request.headers.authorization ?? ""));
      if (request.headers["service-workspace"]) upstreamWorkspaces.push(String(request.headers["service-workspace"]));
    });
  });
  afterAll(() => stack?.close());

  it("discovers from the 401, registers, gets consent, and calls tools with the grant's key upstream", async () => {
    const url = `${stack.url}/oauth/mcp`;
    const { client, provider, callback } = await connectWithOAuth(url);
    // RFC 9207: the authorization response names the issuer.
    expect(callback.searchParams.get("iss")).toBe(`${stack.url}/oauth`);
    expect(provider.information?.client_id).toBeTruthy();
    const tools = await client.listTools();
    expect(tools.tools.map((tool) => tool.name)).toContain("ask");
    upstreamKeys.length = 0;
    const result = await client.callTool({ name: "ask", arguments: { question: "What does the adapter do?" } });
    expect(result.isError).toBeFalsy();
    // The workspace picked at consent.
    expect(new Set(upstreamWorkspaces)).toEqual(new Set(["globex"]));
    expect(upstreamKeys.length).toBeGreaterThan(0);
    expect(new Set(upstreamKeys)).toEqual(new Set([`Bearer ${API_KEY}`]));
    const token = provider.saved?.access_token as string;
    expect(upstreamKeys.some((header) => header.includes(token))).toBe(false);
    await client.close();
  });
});
