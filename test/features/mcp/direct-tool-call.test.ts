import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sourceLinker } from "../../../src/answer/source-links.js";
import { declaresAnswerCard } from "../../../src/dialects/mcp/answer-card.js";
import { readJsonRpc } from "../../../src/dialects/mcp/json-rpc-message.js";
import { listedTools, type ToolContext } from "../../../src/dialects/mcp/tool-definitions.js";
import type { AnswerToolOutput } from "../../../src/dialects/mcp/tool-schemas.js";
import { McpEndpoint, type McpExchange } from "../../../src/http/mcp/mcp-endpoint.js";
import { checkedTools, createToolServer, serverIdentity } from "../../../src/http/mcp/tool-server.js";

// The endpoint's direct path for plain tool calls (src/http/mcp/direct-tool-call.ts) against the
// SDK: the same requests through an endpoint that answers them itself and one that hands every
// request to the SDK, over loopback; status, content type and body bytes must be the same, and
// whatever the direct path is unsure of must reach the SDK. Both run the real tools on a canned
// answer (a question "fail" fails).

const OUTPUT: AnswerToolOutput = {
  answer: "Employees get 25 days [1] — “café” 😀\u2028line",
  query_id: "0b0e8f2c-5e43-4c1a-9a55-3f1e2d6c7b8a",
  mode: "ask",
  sources: [{ n: 1, filename: "handbook.pdf", title: "Handbook", page: 4, snippet: "25 days", url: "urn:workspace-document:handbook.pdf", cited: true }],
  steps: ["Searching", "Answering"],
};

/** What the tools run with here: the canned answer, or a failure for the question "fail". */
function contextOf(card: boolean): ToolContext {
  return {
    workspace: "acme",
    links: sourceLinker({ template: undefined, documentPage: undefined }, "acme"),
    card,
    documents: undefined,
    answer: async (_mode, input) => (input.question === "fail" ? { error: "The workspace failed: try again" } : { output: OUTPUT }),
  };
}

interface Served {
  url: string;
  sdkServers: number;
  direct: number;
}

/** An exchange with the answer card shown: every 2025 request, and a 2026 one whose client declares the extension. */
interface CardExchange extends McpExchange {
  card: boolean;
}

/** One loopback server around one endpoint; `direct: false` leaves every request to the SDK. */
async function serve(direct: boolean, servers: Server[]): Promise<Served> {
  const tools = { plain: checkedTools(listedTools()), card: checkedTools(listedTools({ card: true })) };
  const served: Served = { url: "", sdkServers: 0, direct: 0 };
  const endpoint = new McpEndpoint<CardExchange>({
    identity: serverIdentity("1.0.0"),
    keepAliveMs: 60_000,
    logger: pino({ level: "silent" }),
    ...(direct
      ? {
          runDirect: (exchange, { call }) => {
            served.direct += 1;
            return call.run(contextOf(exchange.card));
          },
        }
      : {}),
    serverFor: (exchange) => {
      served.sdkServers += 1;
      return createToolServer({
        version: "1.0.0",
        instructions: "test",
        revision: exchange.revision,
        tools: exchange.card ? tools.card : tools.plain,
        card: exchange.card ? "<!doctype html><title>card</title>" : null,
        tasks: false,
        run: (call) => call.run(contextOf(exchange.card)),
      });
    },
  });
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let text = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => (text += chunk));
    request.on("end", () => {
      const header = request.headers["mcp-protocol-version"];
      const revision = typeof header === "string" ? header : undefined;
      const body: unknown = JSON.parse(text);
      const message = readJsonRpc(body);
      // As the adapter decides: a 2025 request always shows the card here, a 2026 one when its client declares it.
      const card = revision === "2026-07-28" ? declaresAnswerCard(message.meta) : request.headers["x-test-card"] === "on";
      void endpoint.serve(request, response, body, { principal: "p", revision, message, controller: new AbortController(), card });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  served.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  return served;
}

const servers: Server[] = [];
let sdk: Served;
let direct: Served;
beforeAll(async () => {
  sdk = await serve(false, servers);
  direct = await serve(true, servers);
});
afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
});

const ACCEPT = "application/json, text/event-stream";

/** One POST's status, every response header but `Date` (the second it was sent), content type and bytes. */
async function post(url: string, headers: Record<string, string>, body: unknown) {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  const { date: _date, ...responseHeaders } = Object.fromEntries(response.headers);
  return { status: response.status, headers: responseHeaders, contentType: response.headers.get("content-type"), body: await response.text() };
}

/** Sends one request to both endpoints; returns both answers and which path each took. */
async function both(headers: Record<string, string>, body: unknown) {
  const before = { sdk: sdk.sdkServers, direct: direct.direct, directSdk: direct.sdkServers };
  const bySdk = await post(sdk.url, headers, body);
  const byDirect = await post(direct.url, headers, body);
  return { bySdk, byDirect, tookDirect: direct.direct - before.direct === 1 && direct.sdkServers === before.directSdk };
}

const call = (name: string, args: unknown, id: string | number = 7, extra: Record<string, unknown> = {}) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args, ...extra },
});

describe.each(["2025-03-26", "2025-06-18", "2025-11-25"])("a plain tools/call on revision %s", (revision) => {
  const headers = { accept: ACCEPT, "mcp-protocol-version": revision };
  it.each([
    ["ask, an answer, numeric id", call("ask", { question: "How much leave?" }, 7)],
    ["reason, an answer, string id", call("reason", { question: "How much leave?", query_id: null }, "req-1")],
    ["search, an answer", call("search", { query: "leave" })],
    ["ask, a tool error", call("ask", { question: "fail" })],
    ["fetch, a tool error", call("fetch", { id: "nope" })],
    ["ask with an empty _meta", call("ask", { question: "How much leave?" }, 0, { _meta: {} })],
  ])("%s: the direct path writes the SDK's status, content type and bytes", async (_name, body) => {
    const { bySdk, byDirect, tookDirect } = await both(headers, body);
    expect(tookDirect).toBe(true);
    expect(bySdk.status).toBe(200);
    expect(bySdk.contentType).toBe("application/json");
    expect(byDirect).toEqual(bySdk);
    expect(JSON.parse(byDirect.body)).toMatchObject({ jsonrpc: "2.0", id: body.id, result: { content: expect.any(Array) } });
  });
});

describe("requests the direct path leaves to the SDK", () => {
  const legacy = { accept: ACCEPT, "mcp-protocol-version": "2025-11-25" };
  it.each([
    ["a progress token (an SSE stream)", legacy, call("ask", { question: "How much leave?" }, 1, { _meta: { progressToken: 1 } })],
    ["invalid arguments (a tool error from 2025-11-25)", legacy, call("ask", { question: " " })],
    ["invalid arguments (a protocol error before 2025-11-25)", { ...legacy, "mcp-protocol-version": "2025-06-18" }, call("ask", { question: 3 })],
    ["an unknown argument", legacy, call("ask", { question: "q", extra: 1 })],
    ["an unknown tool", legacy, call("nope", { question: "q" })],
    ["arguments that are not an object", legacy, call("ask", ["q"])],
    ["no protocol version header", { accept: ACCEPT }, call("ask", { question: "How much leave?" })],
    ["an unsupported protocol version", { ...legacy, "mcp-protocol-version": "2024-01-01" }, call("ask", { question: "How much leave?" })],
    ["a client that does not accept SSE", { ...legacy, accept: "application/json" }, call("ask", { question: "How much leave?" })],
    ["a batch", legacy, [call("ask", { question: "How much leave?" })]],
    ["a null id", legacy, call("ask", { question: "How much leave?" }, null as unknown as number)],
    ["tools/list", legacy, { jsonrpc: "2.0", id: 1, method: "tools/list" }],
  ])("%s", async (_name, headers, body) => {
    const { bySdk, byDirect, tookDirect } = await both(headers, body);
    expect(tookDirect).toBe(false);
    expect(byDirect.status).toBe(bySdk.status);
    expect(byDirect.contentType).toBe(bySdk.contentType);
    if (bySdk.contentType === "application/json") expect(byDirect.body).toBe(bySdk.body);
  });
});

/** A 2026-07-28 request's envelope: the three keys every request carries. */
const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "test-client", version: "1.2.3" },
  "io.modelcontextprotocol/clientCapabilities": {},
};
/** A 2026-07-28 `tools/call` and the standard headers that mirror it. */
const modern = (name: string, args: unknown, id: string | number = 7, meta: Record<string, unknown> = ENVELOPE) => ({
  headers: { accept: ACCEPT, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": name },
  body: call(name, args, id, { _meta: meta }),
});

describe("a plain tools/call on revision 2026-07-28 (the _meta envelope)", () => {
  it.each([
    ["ask, an answer, numeric id", modern("ask", { question: "How much leave?" }, 1)],
    ["reason, an answer, string id", modern("reason", { question: "How much leave?", query_id: null }, "req-1")],
    ["build, an answer, id 0", modern("build", { question: "How much leave?" }, 0)],
    ["search, an answer", modern("search", { query: "leave" })],
    ["ask, a tool error", modern("ask", { question: "fail" })],
    ["fetch, a tool error", modern("fetch", { id: "nope" })],
    ["a client that declares capabilities", modern("ask", { question: "How much leave?" }, 2, { ...ENVELOPE, "io.modelcontextprotocol/clientCapabilities": { elicitation: {}, sampling: {} } })],
    ["a client with a title and unicode name", modern("ask", { question: "¿Cuántos días?" }, 3, { ...ENVELOPE, "io.modelcontextprotocol/clientInfo": { name: "cliënt ☃", title: "T", version: "0" } })],
  ])("%s: the direct path writes the SDK's status, content type and bytes (resultType and serverInfo stamped)", async (_name, { headers, body }) => {
    const { bySdk, byDirect, tookDirect } = await both(headers, body);
    expect(tookDirect).toBe(true);
    expect(bySdk.status).toBe(200);
    expect(bySdk.contentType).toBe("application/json");
    expect(byDirect).toEqual(bySdk);
    expect(JSON.parse(byDirect.body)).toMatchObject({
      jsonrpc: "2.0",
      id: body.id,
      result: { content: expect.any(Array), resultType: "complete", _meta: { "io.modelcontextprotocol/serverInfo": serverIdentity("1.0.0") } },
    });
  });

  const { headers, body } = modern("ask", { question: "How much leave?" }, 9);
  const params = body.params as Record<string, unknown>;
  it.each([
    ["a progress token (an SSE stream)", headers, { ...body, params: { ...params, _meta: { ...ENVELOPE, progressToken: 1 } } }],
    ["a trace context in the envelope", headers, { ...body, params: { ...params, _meta: { ...ENVELOPE, "io.modelcontextprotocol/traceparent": `00-${"a".repeat(32)}-${"b".repeat(16)}-01` } } }],
    ["an envelope without clientCapabilities", headers, { ...body, params: { ...params, _meta: { ...ENVELOPE, "io.modelcontextprotocol/clientCapabilities": undefined } } }],
    ["an envelope whose clientInfo has no version", headers, { ...body, params: { ...params, _meta: { ...ENVELOPE, "io.modelcontextprotocol/clientInfo": { name: "x" } } } }],
    ["an envelope naming another revision", headers, { ...body, params: { ...params, _meta: { ...ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2026-09-01" } } }],
    ["no Mcp-Name header", { ...headers, "mcp-name": undefined }, body],
    ["an Mcp-Name naming another tool", { ...headers, "mcp-name": "search" }, body],
    ["a Base64 Mcp-Name", { ...headers, "mcp-name": "=?base64?YXNr?=" }, body],
    ["no Mcp-Method header", { ...headers, "mcp-method": undefined }, body],
    ["an Mcp-Method naming another method", { ...headers, "mcp-method": "tools/list" }, body],
    ["a 2025 MCP-Protocol-Version header on an envelope", { ...headers, "mcp-protocol-version": "2025-11-25" }, body],
    ["invalid arguments", headers, { ...body, params: { ...params, arguments: { question: " " } } }],
    ["an unknown tool", { ...headers, "mcp-name": "nope" }, { ...body, params: { ...params, name: "nope" } }],
    ["a client that does not accept SSE", { ...headers, accept: "application/json" }, body],
    ["no envelope at all", headers, { ...body, params: { name: "ask", arguments: { question: "How much leave?" } } }],
  ])("%s: left to the SDK", async (_name, requestHeaders, requestBody) => {
    const sent = Object.fromEntries(Object.entries(requestHeaders).filter((entry): entry is [string, string] => entry[1] !== undefined));
    const { bySdk, byDirect, tookDirect } = await both(sent, requestBody);
    expect(tookDirect).toBe(false);
    expect(byDirect.status).toBe(bySdk.status);
    expect(byDirect.contentType).toBe(bySdk.contentType);
    if (bySdk.contentType === "application/json") expect(byDirect.body).toBe(bySdk.body);
  });
});

describe("a plain tools/call for a host that shows the answer card (each source with its fetch id)", () => {
  const withCard = { ...ENVELOPE, "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } } };
  it.each([
    ["ask on 2025-11-25", { accept: ACCEPT, "mcp-protocol-version": "2025-11-25", "x-test-card": "on" }, call("ask", { question: "How much leave?" })],
    ["build on 2025-06-18", { accept: ACCEPT, "mcp-protocol-version": "2025-06-18", "x-test-card": "on" }, call("build", { question: "How much leave?" }, "b")],
    ["ask on 2026-07-28, the extension declared", modern("ask", { question: "How much leave?" }, 4, withCard).headers, modern("ask", { question: "How much leave?" }, 4, withCard).body],
  ])("%s: the direct path writes the SDK's bytes", async (_name, headers, body) => {
    const { bySdk, byDirect, tookDirect } = await both(headers, body);
    expect(tookDirect).toBe(true);
    expect(byDirect).toEqual(bySdk);
    const [source] = JSON.parse(byDirect.body).result.structuredContent.sources;
    expect(source.id).toMatch(/^wsrc_/);
  });
});
