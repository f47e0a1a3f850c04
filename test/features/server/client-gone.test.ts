import { createServer, type IncomingMessage, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningAdapter, startAdapter } from "../../helpers/start-stack.js";
import { waitFor } from "../../helpers/wait-for.js";

/** An upstream that takes every query and never answers it, telling when one arrives and when the adapter gives it up. */
function holdingUpstream() {
  const held: { arrived: IncomingMessage; closed: boolean }[] = [];
  const server = createServer((incoming) => {
    const entry = { arrived: incoming, closed: false };
    held.push(entry);
    incoming.resume();
    incoming.socket.once("close", () => (entry.closed = true));
  });
  return { server, held };
}

describe("a client that leaves before its answer", () => {
  const lines: Record<string, unknown>[] = [];
  const upstream = holdingUpstream();
  let adapter: RunningAdapter;

  beforeAll(async () => {
    await new Promise<void>((resolve) => upstream.server.listen(0, "127.0.0.1", resolve));
    const { port } = upstream.server.address() as AddressInfo;
    const logger = pino({ level: "debug" }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
    adapter = await startAdapter(`http://127.0.0.1:${port}`, { DEFAULT_WORKSPACE: "acme" }, logger);
  });
  afterAll(async () => {
    await adapter.close();
    upstream.server.closeAllConnections();
    await new Promise((resolve) => (upstream.server as Server).close(resolve));
  });

  /** Starts a request that the client abandons once its query reached the upstream; resolves with the request's log line (`lines` then hold its lines alone). */
  async function abandon(path: string, headers: Record<string, string>, body: object): Promise<Record<string, unknown>> {
    const { port } = new URL(adapter.url);
    const before = upstream.held.length;
    lines.length = 0;
    const client = request({ host: "127.0.0.1", port, method: "POST", path, headers: { authorization: "Bearer sk-test", "content-type": "application/json", ...headers } });
    client.on("error", () => {});
    client.end(JSON.stringify(body));
    // The adapter is waiting on the workspace service's answer when the client goes.
    await waitFor(() => upstream.held.length === before + 1, "the query to reach the upstream");
    client.destroy();
    await waitFor(() => upstream.held[before]?.closed === true, "the adapter to cancel its upstream call");
    return waitFor(() => lines.find((line) => line.msg === "request"), "the request's log line");
  }

  it("is logged and counted as 499, not as the adapter's failure, and its upstream call is cancelled", async () => {
    const requestLine = await abandon("/v1/chat/completions", {}, { model: "ask", messages: [{ role: "user", content: "How much annual leave do employees get?" }] });
    expect(requestLine).toMatchObject({ path: "/v1/chat/completions", status: 499, completed: false });
    expect(lines.filter((line) => Number(line.level) >= 40)).toEqual([]);
    const metrics = await (await fetch(`${adapter.url}/metrics`)).text();
    expect(metrics).toMatch(/adapter_http_requests_total\{route="\/v1\/chat\/completions",mode="ask",status="499"\} 1/);
  });

  // An MCP client that goes mid tool call (it closed the connection: how a stateless client cancels) is no tool failure either.
  it.each(["2025-06-18", "2025-11-25", "2026-07-28"])("leaving an MCP tool call on revision %s is no failure of the adapter", async (revision) => {
    const call = { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "ask", arguments: { question: "How much annual leave do employees get?" } } };
    const modern = revision === "2026-07-28";
    const headers: Record<string, string> = { accept: "application/json, text/event-stream", "mcp-protocol-version": revision };
    // 2026-07-28 carries its envelope in `_meta` and mirrors the method in headers.
    const envelope = {
      "io.modelcontextprotocol/protocolVersion": revision,
      "io.modelcontextprotocol/clientInfo": { name: "test-client", version: "1" },
      "io.modelcontextprotocol/clientCapabilities": {},
    };
    if (modern) Object.assign(headers, { "mcp-method": "tools/call", "mcp-name": "ask" });
    const line = await abandon("/mcp", headers, modern ? { ...call, params: { ...call.params, _meta: envelope } } : call);
    expect(line).toMatchObject({ completed: false });
    // The tool call ends after the request's line: its last word is a debug line, or a warning when it counts as failed.
    const ended = await waitFor(() => lines.find((entry) => typeof entry.msg === "string" && entry.msg.startsWith("tool call")), "the tool call's end");
    expect(ended).toMatchObject({ level: 20, msg: "tool call cancelled: the client left", tool: "ask" });
    expect(lines.filter((entry) => Number(entry.level) >= 40)).toEqual([]);
  });
});
