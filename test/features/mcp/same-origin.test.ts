import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_KEY, type RunningAdapter, type Stack, startAdapter, startStack } from "../../helpers/start-stack.js";

// docs/architecture/mcp.md#mcp-tools: the MCP endpoint refuses browser origins it does not know (the
// transport's guard against DNS rebinding) but accepts the adapter's own pages: an Origin that is the
// adapter's own loopback scheme://host, or PUBLIC_URL's origin. With the embedded workspace, a foreign
// Host is refused before (docs/operating.md#a-local-workspace-stays-local); in front of a real
// workspace the Host is the proxy's business, and the Origin alone refuses a rebinding page.

const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } };
const mcpHeaders = { authorization: `Bearer ${API_KEY}`, "service-workspace": "acme", "content-type": "application/json", accept: "application/json, text/event-stream" };

/** POSTs `initialize` with the given headers (a `host` of our choosing too, as a rebinding browser would send it). */
function post(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${url}/mcp`, { method: "POST", headers: { ...mcpHeaders, ...headers } }, (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (body += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on("error", reject);
    request.end(JSON.stringify(initialize));
  });
}

describe("same-origin MCP requests", () => {
  let stack: Stack;
  let published: RunningAdapter;

  beforeAll(async () => {
    stack = await startStack();
    // In front of a real workspace (WORKSPACE_BASE_URL set): the Host is not checked.
    published = await startAdapter(stack.workspace.url, { WORKSPACE_BASE_URL: stack.workspace.url, PUBLIC_URL: "https://adapter.example.com/" });
  });
  afterAll(async () => {
    await published?.close();
    await stack?.close();
  });

  it("accepts the adapter's own origin (its pages on loopback)", async () => {
    const own = await post(stack.url, { origin: stack.url });
    expect(own.status).toBe(200);
    expect(JSON.parse(own.body)).toMatchObject({ jsonrpc: "2.0", id: 1, result: { serverInfo: expect.any(Object) } });
    const port = new URL(stack.url).port;
    const localhost = await post(stack.url, { origin: `http://localhost:${port}`, host: `localhost:${port}` });
    expect(localhost.status).toBe(200);
  });

  it("refuses a foreign origin, another port of the same host, and a rebinding name whose Host matches its Origin", async () => {
    const port = new URL(stack.url).port;
    for (const headers of <Record<string, string>[]>[
      { origin: "http://evil.example" },
      { origin: `http://127.0.0.1:${Number(port) === 1 ? 2 : 1}` },
      { origin: `https://127.0.0.1:${port}` },
    ]) {
      const refused = await post(stack.url, headers);
      expect(refused.status, JSON.stringify(headers)).toBe(403);
      expect(JSON.parse(refused.body)).toMatchObject({ error: { code: "origin_not_allowed" } });
    }
    // The rebinding name: its Host is refused with the embedded workspace, its Origin in front of a real one.
    const rebound = await post(stack.url, { origin: `http://evil.example:${port}`, host: `evil.example:${port}` });
    expect([rebound.status, JSON.parse(rebound.body).error.code]).toEqual([421, "host_not_allowed"]);
    const publishedPort = new URL(published.url).port;
    const behindProxy = await post(published.url, { origin: `http://evil.example:${publishedPort}`, host: `evil.example:${publishedPort}` });
    expect([behindProxy.status, JSON.parse(behindProxy.body).error.code]).toEqual([403, "origin_not_allowed"]);
  });

  it("accepts PUBLIC_URL's origin, and nothing that merely starts like it", async () => {
    expect((await post(published.url, { origin: "https://adapter.example.com" })).status).toBe(200);
    for (const origin of ["https://adapter.example.com.evil.net", "http://adapter.example.com", "https://adapter.example.com:8443"]) {
      expect((await post(published.url, { origin })).status, origin).toBe(403);
    }
  });
});
