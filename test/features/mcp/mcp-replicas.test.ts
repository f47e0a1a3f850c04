import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { documentReader } from "../../../src/embedded-workspace/read-document.js";
import { type RunningWorkspace, startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import { connectMcp, REVISIONS } from "../../helpers/mcp-clients.js";
import { API_KEY, FIXTURE_DOCUMENTS, type RunningAdapter, startAdapter } from "../../helpers/start-stack.js";

// Two replicas behind a load balancer that sends each request to the other one: the MCP endpoint
// keeps nothing between requests, so every client works as against one (search ids, query ids
// and the 2025 handshake cross replicas).
let workspace: RunningWorkspace;
let replicas: RunningAdapter[];
let balancer: Server;
let balancerUrl: string;
const served = [0, 0];

beforeAll(async () => {
  workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], apiKeys: [API_KEY], stepDelayMs: 10 });
  replicas = await Promise.all([0, 1].map(() => startAdapter(workspace.url, {}, undefined, { documents: documentReader([FIXTURE_DOCUMENTS]), publicUrl: () => balancerUrl })));
  let next = 0;
  balancer = createServer((incoming, outgoing) => {
    const index = next;
    next = 1 - next;
    served[index] = (served[index] ?? 0) + 1;
    const target = new URL(replicas[index]?.url as string);
    const forwarded = httpRequest(
      { host: target.hostname, port: target.port, method: incoming.method, path: incoming.url, headers: incoming.headers },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    forwarded.on("error", () => outgoing.destroy());
    outgoing.on("close", () => forwarded.destroy());
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => balancer.listen(0, "127.0.0.1", () => resolve()));
  balancerUrl = `http://127.0.0.1:${(balancer.address() as AddressInfo).port}`;
});
afterAll(async () => {
  balancer.closeAllConnections();
  await new Promise((resolve) => balancer.close(resolve));
  await Promise.all(replicas.map((replica) => replica.close()));
  await workspace.close();
});

describe.each(REVISIONS)("two replicas taking alternate requests, revision %s", (revision) => {
  it("serve a whole session: handshake, tools, a follow-up by query_id, search then fetch", async () => {
    const before = [...served];
    const client = await connectMcp(revision, `${balancerUrl}/mcp`, { authorization: `Bearer ${API_KEY}`, "service-workspace": "acme" });
    try {
      expect((await client.listTools()).length).toBe(5);
      const first = await client.callTool("ask", { question: "How are security incidents reported?" }, { onprogress: () => undefined });
      const second = await client.callTool("ask", { question: "And who is told?", query_id: first.structuredContent.query_id });
      expect(second.isError).toBeFalsy();
      expect(second.structuredContent.query_id).toBe(first.structuredContent.query_id);
      const { results } = (await client.callTool("search", { query: "expense receipts" })).structuredContent;
      const fetched = await client.callTool("fetch", { id: results[0].id });
      expect(fetched.structuredContent.metadata.text_is).toBe("document");
      expect(fetched.structuredContent.url.startsWith(`${balancerUrl}/documents/acme/`)).toBe(true);
    } finally {
      await client.close();
    }
    expect((served[0] ?? 0) - (before[0] ?? 0)).toBeGreaterThanOrEqual(2);
    expect((served[1] ?? 0) - (before[1] ?? 0)).toBeGreaterThanOrEqual(2);
  });
});
