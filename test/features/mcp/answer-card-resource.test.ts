import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from "@modelcontextprotocol/client";
import { getToolUiResourceUri, McpUiResourceMetaSchema, McpUiToolMetaSchema } from "@modelcontextprotocol/ext-apps/app-bridge";
import { Ajv } from "ajv";
import { Client as Client20250618 } from "mcp-sdk-2025-06-18/client/index.js";
import { StreamableHTTPClientTransport as Transport20250618 } from "mcp-sdk-2025-06-18/client/streamableHttp.js";
import { Client as ClientV1 } from "mcp-sdk-v1/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "mcp-sdk-v1/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectRoot } from "../../../src/util/package-info.js";
import { API_KEY, type RunningAdapter, type Stack, startAdapter, startStack } from "../../helpers/start-stack.js";

// The answer card as MCP Apps hosts discover it (docs/mcp.md#the-answer-card), through the official
// clients of each revision: tools/list links it from ask, reason and build in the extension's shape;
// resources/list and resources/read serve it with its policy; and a host that does not declare the
// extension (which 2026-07-28 lets the server tell) gets exactly what MCP_APPS=off gives.

const CARD = "ui://workspace/answer-v1.html";
const MIME = "text/html;profile=mcp-app";
const UI_EXTENSION = { "io.modelcontextprotocol/ui": { mimeTypes: [MIME] } };
const auth = { authorization: `Bearer ${API_KEY}`, "service-workspace": "acme" };

/** The client calls these tests make, on each SDK line. */
interface ResourceClient {
  listTools(): Promise<{ tools: Record<string, any>[] }>;
  listResources(): Promise<{ resources: Record<string, any>[] }>;
  readResource(params: { uri: string }): Promise<{ contents: Record<string, any>[] }>;
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<any>;
  close(): Promise<void>;
}

/** The official client of a revision; on 2026-07-28, declaring the Apps extension or not. */
async function connect(url: string, revision: string, declaresApps = true): Promise<ResourceClient> {
  const info = { name: `card-test-${revision}`, version: "1.0.0" };
  const requestInit = { headers: auth };
  if (revision === "2026-07-28") {
    const capabilities = declaresApps ? { extensions: UI_EXTENSION } : {};
    const client = new ClientV2(info, { versionNegotiation: { mode: { pin: "2026-07-28" } }, capabilities });
    await client.connect(new TransportV2(new URL(url), { requestInit }));
    return client as unknown as ResourceClient;
  }
  // 2025 clients declare the extension in `initialize` (which a stateless server cannot keep).
  const capabilities = { extensions: UI_EXTENSION } as Record<string, unknown>;
  if (revision === "2025-06-18") {
    const client = new Client20250618(info, { capabilities });
    await client.connect(new Transport20250618(new URL(url), { requestInit }));
    return client as unknown as ResourceClient;
  }
  const client = new ClientV1(info, { capabilities });
  await client.connect(new TransportV1(new URL(url), { requestInit }));
  return client as unknown as ResourceClient;
}

/** One raw 2026-07-28 request and its JSON-RPC result (the wire, cache fields included). */
async function modern(url: string, method: string, params: Record<string, unknown>, name?: string, capabilities: object = { extensions: UI_EXTENSION }) {
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
    "io.modelcontextprotocol/clientCapabilities": capabilities,
  };
  const headers: Record<string, string> = {
    ...auth,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": method,
    ...(name ? { "mcp-name": name } : {}),
  };
  const response = await fetch(url, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: meta } }) });
  return (await response.json()) as { result?: Record<string, any>; error?: { code: number; message: string; data?: unknown } };
}

let stack: Stack;
let appsOff: RunningAdapter;
const built = () => readFileSync(join(projectRoot(), "dist/mcp-app/answer-v1.html"), "utf8");

beforeAll(async () => {
  stack = await startStack({ DEFAULT_WORKSPACE: "acme" });
  appsOff = await startAdapter(stack.workspace.url, { DEFAULT_WORKSPACE: "acme", MCP_APPS: "off" });
});
afterAll(async () => {
  await appsOff?.close();
  await stack?.close();
});

describe.each(["2025-06-18", "2025-11-25", "2026-07-28"])("a host on revision %s that renders MCP Apps", (revision) => {
  let client: ResourceClient;
  beforeAll(async () => {
    client = await connect(`${stack.url}/mcp`, revision);
  });
  afterAll(() => client?.close());

  it("finds the card linked from ask, reason and build, in the extension's shape and the older flat key; search and fetch link nothing", async () => {
    const { tools } = await client.listTools();
    for (const tool of tools) {
      if (["ask", "reason", "build"].includes(tool.name)) {
        expect(McpUiToolMetaSchema.parse(tool._meta?.ui)).toEqual({ resourceUri: CARD, visibility: ["model", "app"] });
        expect(tool._meta?.["ui/resourceUri"]).toBe(CARD);
        expect(getToolUiResourceUri(tool)).toBe(CARD);
      } else {
        expect(tool._meta).toBeUndefined();
      }
    }
  });

  it("lists the card and reads it: the self-contained HTML that was built, with a policy that allows no domain", async () => {
    const { resources } = await client.listResources();
    expect(resources).toEqual([expect.objectContaining({ uri: CARD, name: "answer-card", mimeType: MIME })]);
    expect(McpUiResourceMetaSchema.parse(resources[0]?._meta?.ui)).toEqual({ csp: { connectDomains: [], resourceDomains: [] }, prefersBorder: true });
    const { contents } = await client.readResource({ uri: CARD });
    expect(contents).toHaveLength(1);
    const [card] = contents as Record<string, any>[];
    expect(card).toMatchObject({ uri: CARD, mimeType: MIME, text: built() });
    expect(card?.text).toMatch(/^<!doctype html>/i);
    expect(card?.text).not.toMatch(/<script[^>]+src=|<link[^>]+href=|https?:\/\//i);
    expect(McpUiResourceMetaSchema.parse(card?._meta?.ui)).toEqual({ csp: { connectDomains: [], resourceDomains: [] }, prefersBorder: true });
    expect(card?._meta?.["openai/widgetCSP"]).toEqual({ connect_domains: [], resource_domains: [] });
    await expect(client.readResource({ uri: "ui://workspace/nope.html" })).rejects.toMatchObject({ code: -32602 });
  });

  it("gets each source's fetch id in structuredContent, declared in the tool's output schema; content is the same text", async () => {
    const question = { question: "How are security incidents reported?" };
    const [withCard, without] = await Promise.all([client.callTool({ name: "ask", arguments: question }), connect(`${appsOff.url}/mcp`, revision)]);
    const plain = await without.callTool({ name: "ask", arguments: question });
    await without.close();
    const { tools } = await client.listTools();
    const schema = tools.find((tool) => tool.name === "ask")?.outputSchema;
    expect(new Ajv().validate(schema, withCard.structuredContent)).toBe(true);
    for (const source of withCard.structuredContent.sources) {
      expect(source.id).toMatch(/^wsrc_/);
      const fetched = await client.callTool({ name: "fetch", arguments: { id: source.id } });
      expect(fetched.isError).toBeUndefined();
    }
    const strip = (text: string) => text.replace(/query_id: [\w-]+/g, "");
    expect(strip(withCard.content[0].text)).toBe(strip(plain.content[0].text));
    expect(plain.structuredContent.sources.every((source: object) => !("id" in source))).toBe(true);
  });
});

describe("2026-07-28, per request", () => {
  it("marks the card's listing and HTML cacheable by any client for an hour", async () => {
    const list = await modern(`${stack.url}/mcp`, "resources/list", {});
    expect(list.result).toMatchObject({ resultType: "complete", ttlMs: 3_600_000, cacheScope: "public" });
    const read = await modern(`${stack.url}/mcp`, "resources/read", { uri: CARD }, CARD);
    expect(read.result).toMatchObject({ resultType: "complete", ttlMs: 3_600_000, cacheScope: "public", contents: [{ uri: CARD, mimeType: MIME }] });
    const missing = await modern(`${stack.url}/mcp`, "resources/read", { uri: "ui://workspace/nope.html" }, "ui://workspace/nope.html");
    expect(missing.error).toMatchObject({ code: -32602, data: { uri: "ui://workspace/nope.html" } });
  });

  it("gives a host that does not declare the extension exactly what MCP_APPS=off gives: no link, no resources capability, no fetch ids", async () => {
    const without = { elicitation: {} };
    for (const method of ["tools/list", "server/discover"]) {
      const on = await modern(`${stack.url}/mcp`, method, {}, undefined, without);
      const off = await modern(`${appsOff.url}/mcp`, method, {}, undefined, without);
      expect(on).toEqual(off);
    }
    const discovered = await modern(`${stack.url}/mcp`, "server/discover", {}, undefined, without);
    // The tasks extension is the server's whatever the host declares (docs/mcp.md#long-answers-as-tasks); the card's resources are not.
    const tasks = { extensions: { "io.modelcontextprotocol/tasks": {} } };
    expect(discovered.result?.capabilities).toEqual({ tools: {}, ...tasks });
    const declared = await modern(`${stack.url}/mcp`, "server/discover", {});
    expect(declared.result?.capabilities).toEqual({ tools: {}, resources: {}, ...tasks });
    const client = await connect(`${stack.url}/mcp`, "2026-07-28", false);
    const result = await client.callTool({ name: "ask", arguments: { question: "How are security incidents reported?" } });
    expect(result.structuredContent.sources.length).toBeGreaterThan(0);
    expect(result.structuredContent.sources.every((source: object) => !("id" in source))).toBe(true);
    await client.close();
  });
});

describe("MCP_APPS=off", () => {
  it("links no card and serves no resources, on every revision", async () => {
    for (const revision of ["2025-11-25", "2026-07-28"]) {
      const client = await connect(`${appsOff.url}/mcp`, revision);
      const { tools } = await client.listTools();
      expect(tools.every((tool) => tool._meta === undefined)).toBe(true);
      // The 2025 client asks and is told there is no such method; the 2026 one does not ask a server that declares no resources.
      if (revision === "2026-07-28") expect((await client.listResources()).resources).toEqual([]);
      else await expect(client.listResources()).rejects.toMatchObject({ code: -32601 });
      await client.close();
    }
    const raw = await modern(`${appsOff.url}/mcp`, "resources/read", { uri: CARD }, CARD);
    expect(raw.error?.code).toBe(-32601);
    const legacy = await fetch(`${appsOff.url}/mcp`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "resources/list" }),
    });
    expect(await legacy.text()).toMatch(/"code":-32601/);
  });
});
