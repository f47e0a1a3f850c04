import { Validator } from "@seriousme/openapi-schema-validator";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectMcp, type McpTestClient, REVISIONS } from "../../helpers/mcp-clients.js";
import { API_KEY, type Stack, startAdapter, startStack } from "../../helpers/start-stack.js";
import { waitFor } from "../../helpers/wait-for.js";

// Every bad input of the MCP endpoint, and every way a tool call can fail: a clear error in the
// shape the client reads (HTTP with the interface's body at the edge, JSON-RPC for the message,
// a tool result with isError for the answer), never a 500.
let stack: Stack;
const auth = { authorization: `Bearer ${API_KEY}`, "service-workspace": "acme" };
const legacyHeaders = { ...auth, "content-type": "application/json", accept: "application/json, text/event-stream" };
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

beforeAll(async () => {
  stack = await startStack({ QUERY_TIMEOUT_MS: "800", BODY_LIMIT_BYTES: "4096", MAX_JSON_DEPTH: "8", MAX_CONCURRENT_PER_WORKSPACE: "3", SSE_KEEPALIVE_MS: "150" });
});
afterAll(() => stack.close());

const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } };
const post = (body: string | object, headers: Record<string, string> = legacyHeaders, path = "/mcp") =>
  fetch(`${stack.url}${path}`, { method: "POST", headers, body: typeof body === "string" ? body : JSON.stringify(body) });

/** The message a chat completion gets for the same prompt, query ids blotted out. */
async function chatErrorMessage(prompt: string): Promise<string> {
  const response = await fetch(`${stack.url}/v1/chat/completions`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ model: "ask", messages: [{ role: "user", content: prompt }] }),
  });
  expect(response.status).toBeGreaterThanOrEqual(500);
  return ((await response.json()) as { error: { message: string } }).error.message.replace(UUID, "<id>");
}

describe("the MCP endpoint's edge", () => {
  it("answers no credential with 401, WWW-Authenticate: Bearer and the interface's error body, never a tool list", async () => {
    for (const body of [initialize, { jsonrpc: "2.0", id: 2, method: "tools/list" }]) {
      const { authorization: _none, ...anonymous } = legacyHeaders;
      const response = await post(body, anonymous);
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toBe("Bearer");
      const error = (await response.json()) as Record<string, any>;
      expect(error).toMatchObject({ detail: expect.any(String), error: { type: "authentication_error" } });
      expect(JSON.stringify(error)).not.toContain("tools");
    }
  });

  it("refuses a key the deployment does not hold, with its own keys and workspace key", async () => {
    const guarded = await startAdapter(stack.workspace.url, { ADAPTER_API_KEYS: "team-key", WORKSPACE_API_KEY: API_KEY, DEFAULT_WORKSPACE: "acme" });
    try {
      const wrong = await fetch(`${guarded.url}/mcp`, { method: "POST", headers: { ...legacyHeaders, authorization: "Bearer not-the-team-key" }, body: JSON.stringify(initialize) });
      expect(wrong.status).toBe(401);
      expect(wrong.headers.get("www-authenticate")).toBe("Bearer");
      const client = await connectMcp("2025-11-25", `${guarded.url}/mcp`, { authorization: "Bearer team-key" });
      const result = await client.callTool("ask", { question: "How are security incidents reported?" });
      expect(result.structuredContent.answer).toContain("within one hour");
      await client.close();
    } finally {
      await guarded.close();
    }
  });

  it("answers GET and DELETE with 405 and Allow: POST (stateless: no standalone stream, no session)", async () => {
    for (const method of ["GET", "DELETE"]) {
      const response = await fetch(`${stack.url}/mcp`, { method, headers: auth });
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toBe("POST");
    }
  });

  it("refuses a browser origin the deployment does not allow (DNS rebinding)", async () => {
    const response = await post(initialize, { ...legacyHeaders, origin: "http://evil.example" });
    expect(response.status).toBe(403);
    expect(((await response.json()) as any).error.code).toBe("origin_not_allowed");
  });

  it("needs a workspace: from the header, else the path, else the default", async () => {
    const { "service-workspace": _none, ...noWorkspace } = legacyHeaders;
    const missing = await post(initialize, noWorkspace);
    expect(missing.status).toBe(422);
    expect(((await missing.json()) as any).detail[0]).toMatchObject({ loc: ["header", "service-workspace"], type: "missing" });
    const badPath = await post(initialize, noWorkspace, "/mcp/no%20such%20id");
    expect(badPath.status).toBe(422);
    expect(((await badPath.json()) as any).detail[0].loc).toEqual(["path", "workspace"]);

    const fromPath = await connectMcp("2025-11-25", `${stack.url}/mcp/globex`, { authorization: `Bearer ${API_KEY}` });
    const creates = stack.workspace.control.creates.length;
    await fromPath.callTool("ask", { question: "leave policy" });
    expect(stack.workspace.control.creates[creates]?.workspace).toBe("globex");
    await fromPath.close();
    const headerWins = await connectMcp("2025-11-25", `${stack.url}/mcp/globex`, auth);
    await headerWins.callTool("ask", { question: "leave policy" });
    expect(stack.workspace.control.creates.at(-1)?.workspace).toBe("acme");
    await headerWins.close();
  });

  it("answers a body that is not JSON, too large, too deep, empty or not declared as JSON with a JSON-RPC error", async () => {
    const cases: [string | object, Record<string, string>, number, number][] = [
      ["{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ", legacyHeaders, 400, -32700],
      [{ ...initialize, padding: "x".repeat(5000) }, legacyHeaders, 413, -32600],
      [{ ...initialize, params: { ...initialize.params, deep: [[[[[[[[["too deep"]]]]]]]]] } }, legacyHeaders, 400, -32600],
      ["", legacyHeaders, 400, -32600],
      [JSON.stringify(initialize), { ...legacyHeaders, "content-type": "text/plain" }, 415, -32600],
    ];
    for (const [body, headers, status, code] of cases) {
      const response = await post(body, headers);
      expect(response.status).toBe(status);
      const error = (await response.json()) as any;
      expect(error).toMatchObject({ jsonrpc: "2.0", id: null, error: { code, message: expect.any(String) } });
    }
  });

  it("answers a JSON body that is no JSON-RPC message, or a method it does not serve, with a JSON-RPC error", async () => {
    const notRpc = await post({ hello: "world" });
    expect(notRpc.status).toBe(400);
    expect(((await notRpc.json()) as any).error.code).toBeLessThan(-32000);
    const client = await connectMcp("2025-11-25", `${stack.url}/mcp`, auth);
    const unknownMethod = await post({ jsonrpc: "2.0", id: 3, method: "prompts/list" }, { ...legacyHeaders, "mcp-protocol-version": "2025-11-25" });
    expect(await unknownMethod.text()).toMatch(/"code":-32601/);
    await client.close();
  });

  it("takes a place under the concurrency caps like every answer route (429 beyond)", async () => {
    const clients = await Promise.all([0, 1, 2].map(() => connectMcp("2025-11-25", `${stack.url}/mcp`, auth)));
    const stalled = clients.map((client) => client.callTool("ask", { question: "leave [fault:stall]" }).catch(() => undefined));
    await waitFor(() => stack.adapter.limit.inFlight === 3, "the three stalled calls admitted");
    const refused = await post(initialize);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    await Promise.all(stalled);
    await Promise.all(clients.map((client) => client.close()));
  });

  it("ends a tool call still waiting at shutdown with a tool error that says so", async () => {
    const own = await startStack({ SHUTDOWN_GRACE_MS: "100" });
    try {
      const client = await connectMcp("2026-07-28", `${own.url}/mcp`, auth);
      const call = client.callTool("ask", { question: "leave [fault:stall]" }, { onprogress: () => undefined });
      await waitFor(() => own.adapter.watcher.waitingQueries > 0, "the call waiting");
      void own.shutdown();
      expect(await call).toMatchObject({ isError: true, content: [{ text: "The adapter is shutting down; the answer was cut short" }] });
    } finally {
      await own.close();
    }
  });

  it("is described in /openapi.json: both paths, their errors, and the tools with their schemas", async () => {
    const document = (await (await fetch(`${stack.url}/openapi.json`)).json()) as any;
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    for (const path of ["/mcp", "/mcp/{workspace}"]) {
      const operation = document.paths[path].post;
      expect(Object.keys(operation.responses)).toEqual(["200", "202", "400", "401", "403", "405", "413", "415", "422", "429"]);
      expect(operation["x-mcp-tools"].map((tool: { name: string }) => tool.name)).toEqual(["ask", "reason", "build", "search", "fetch"]);
      expect(operation["x-mcp-tools"][0].outputSchema.required).toEqual(["answer", "query_id", "mode", "sources", "steps"]);
    }
  });

  it("is not served with MCP=off", async () => {
    const off = await startAdapter(stack.workspace.url, { MCP: "off" });
    try {
      const response = await fetch(`${off.url}/mcp`, { method: "POST", headers: legacyHeaders, body: JSON.stringify(initialize) });
      expect(response.status).toBe(404);
    } finally {
      await off.close();
    }
  });

  it("never answers random requests with a 5xx, and stays up", async () => {
    const rpcLike = fc.record(
      {
        jsonrpc: fc.oneof(fc.constant("2.0"), fc.jsonValue()),
        id: fc.oneof(fc.integer(), fc.string(), fc.jsonValue()),
        method: fc.oneof(fc.constantFrom("initialize", "tools/list", "tools/call", "notifications/cancelled", "server/discover", "ping"), fc.string()),
        params: fc.oneof(
          fc.record({ name: fc.oneof(fc.constantFrom("ask", "fetch", "search", "nope"), fc.jsonValue()), arguments: fc.jsonValue() }, { requiredKeys: [] }),
          fc.jsonValue(),
        ),
      },
      { requiredKeys: [] },
    );
    const body = fc.oneof(rpcLike.map((value) => JSON.stringify(value)), fc.jsonValue().map((value) => JSON.stringify(value)), fc.string());
    const headerSet = fc.record({
      version: fc.constantFrom(undefined, "2025-06-18", "2025-11-25", "2026-07-28", "1999-01-01", "junk"),
      accept: fc.constantFrom(undefined, "application/json", "text/event-stream", "application/json, text/event-stream", "*/*"),
      session: fc.constantFrom(undefined, "some-session"),
    });
    await fc.assert(
      fc.asyncProperty(body, headerSet, async (payload, sent) => {
        const headers: Record<string, string> = { ...auth, "content-type": "application/json" };
        if (sent.version) headers["mcp-protocol-version"] = sent.version;
        if (sent.accept) headers.accept = sent.accept;
        if (sent.session) headers["mcp-session-id"] = sent.session;
        const response = await post(payload, headers);
        expect(response.status).toBeLessThan(500);
        await response.text();
      }),
      { numRuns: 150 },
    );
    expect((await post(initialize)).status).toBe(200);
  });
});

describe.each(REVISIONS)("tool errors on revision %s", (revision) => {
  let client: McpTestClient;
  beforeAll(async () => {
    client = await connectMcp(revision, `${stack.url}/mcp`, auth);
  });
  afterAll(() => client.close());

  it("answers an unknown tool with the protocol's invalid-params error", async () => {
    const error = await client.callTool("summarize", { question: "hi" }).catch((caught: unknown) => caught);
    expect((error as { code: number }).code).toBe(-32602);
    expect(String((error as Error).message)).toMatch(/Unknown tool 'summarize': the tools are ask, reason, build, search, fetch/);
  });

  it("answers bad arguments with invalid params (2025-06-18), or a tool error the model can correct (SEP-1303, later revisions)", async () => {
    for (const args of [{}, { question: 42 }, { question: "   " }, { question: "hi", query_id: "../etc" }, { question: "hi", extra: true }]) {
      const outcome = await client.callTool("ask", args).catch((caught: unknown) => caught);
      if (revision === "2025-06-18") {
        expect((outcome as { code: number }).code).toBe(-32602);
        expect(String((outcome as Error).message)).toMatch(/Invalid arguments for tool 'ask': /);
      } else {
        expect(outcome).toMatchObject({ isError: true, content: [{ type: "text", text: expect.stringMatching(/^Invalid arguments for tool 'ask': /) }] });
      }
    }
    expect(stack.workspace.control.creates.some((create) => create.body.content === "   ")).toBe(false);
  });

  it("answers a FAILED query, a deadline and an upstream fault with isError and the message the OpenAI routes give", async () => {
    const failed = await client.callTool("ask", { question: "leave [fault:failed]" });
    expect(failed.isError).toBe(true);
    expect(failed.content[0].text.replace(UUID, "<id>")).toBe(await chatErrorMessage("leave [fault:failed]"));

    const late = await client.callTool("ask", { question: "leave [fault:stall]" });
    expect(late.isError).toBe(true);
    expect(late.content[0].text.replace(UUID, "<id>")).toBe(await chatErrorMessage("leave [fault:stall]"));

    stack.workspace.control.inject({ on: "create", kind: "status", status: 503 });
    const fault = await client.callTool("ask", { question: "leave policy" });
    stack.workspace.control.inject({ on: "create", kind: "status", status: 503 });
    expect(fault.isError).toBe(true);
    expect(fault.content[0].text.replace(UUID, "<id>")).toBe(await chatErrorMessage("leave policy"));
  });

  it("keeps a waiting client's timeout from firing: a progress notification after every keep-alive interval of silence", async () => {
    // The client gives up after 1.2 s of silence; the query's deadline is 2 s; a progress notification
    // comes every 150 ms of silence: a busy machine may delay one by a second before the client's timeout fires.
    const patient = await startStack({ QUERY_TIMEOUT_MS: "2000", SSE_KEEPALIVE_MS: "150" });
    const own = await connectMcp(revision, `${patient.url}/mcp`, auth);
    const progress: { progress: number; message?: string }[] = [];
    const late = await own.callTool("reason", { question: "leave [fault:stall]" }, { onprogress: (update) => progress.push(update), timeout: 1200 }).finally(async () => {
      await own.close();
      await patient.close();
    });
    expect(late.isError).toBe(true);
    const signs = progress.filter((update) => /^Still working \(\d+ s\)$/.test(update.message ?? ""));
    expect(signs.length).toBeGreaterThanOrEqual(2);
    expect(progress.map((update) => update.progress)).toEqual(progress.map((_, index) => index + 1));
  });

  it("answers a query_id of another workspace with the upstream's not-found as a tool error", async () => {
    const other = await connectMcp(revision, `${stack.url}/mcp/globex`, { authorization: `Bearer ${API_KEY}` });
    const theirs = await other.callTool("ask", { question: "leave policy" });
    await other.close();
    const result = await client.callTool("ask", { question: "and?", query_id: theirs.structuredContent.query_id });
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toMatch(/not found|No query/i);
  });

  it("answers fetch of an id search did not make, or of another workspace, with a tool error", async () => {
    const made = await client.callTool("fetch", { id: "handbook.md" });
    expect(made).toMatchObject({ isError: true, content: [{ text: expect.stringMatching(/is not an id that search returned/) }] });
    const other = await connectMcp(revision, `${stack.url}/mcp/globex`, { authorization: `Bearer ${API_KEY}` });
    const { results } = (await other.callTool("search", { query: "leave policy" })).structuredContent;
    await other.close();
    const foreign = await client.callTool("fetch", { id: results[0].id });
    expect(foreign).toMatchObject({ isError: true, content: [{ text: expect.stringMatching(/comes from workspace 'globex', not 'acme'/) }] });
  });
});
