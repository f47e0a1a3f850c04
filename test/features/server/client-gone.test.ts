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
    const logger = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
    adapter = await startAdapter(`http://127.0.0.1:${port}`, { DEFAULT_WORKSPACE: "acme" }, logger);
  });
  afterAll(async () => {
    await adapter.close();
    upstream.server.closeAllConnections();
    await new Promise((resolve) => (upstream.server as Server).close(resolve));
  });

  it("is logged and counted as 499, not as the adapter's failure, and its upstream call is cancelled", async () => {
    const { port } = new URL(adapter.url);
    const client = request({ host: "127.0.0.1", port, method: "POST", path: "/v1/chat/completions", headers: { authorization: "Bearer sk-test", "content-type": "application/json" } });
    client.on("error", () => {});
    client.end(JSON.stringify({ model: "ask", messages: [{ role: "user", content: "How much annual leave do employees get?" }] }));
    // The adapter is waiting on the workspace service's answer when the client goes.
    await waitFor(() => upstream.held.length === 1, "the query to reach the upstream");
    client.destroy();
    await waitFor(() => upstream.held[0]?.closed === true, "the adapter to cancel its upstream call");
    const requestLine = await waitFor(() => lines.find((line) => line.msg === "request"), "the request's log line");
    expect(requestLine).toMatchObject({ path: "/v1/chat/completions", status: 499, completed: false });
    expect(lines.filter((line) => Number(line.level) >= 40)).toEqual([]);
    const metrics = await (await fetch(`${adapter.url}/metrics`)).text();
    expect(metrics).toMatch(/adapter_http_requests_total\{route="\/v1\/chat\/completions",mode="ask",status="499"\} 1/);
  });
});
