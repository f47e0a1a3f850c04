import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type RunningWorkspace, startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import { API_KEY, FIXTURE_DOCUMENTS, type RunningAdapter, startAdapter } from "../../helpers/start-stack.js";
import { createReasonTask, mcpClientAs } from "../../helpers/tenancy.js";
import { waitFor } from "../../helpers/wait-for.js";

// MCP_TASKS_PER_CREDENTIAL (docs/mcp.md#long-answers-as-tasks) under calls at once (issue 56, code
// review §2.4 #3): a task's place under the cap is taken at the check, before the workspace is asked,
// so that six calls at once from one key start two tasks, not six; a task that does not start gives
// its place back.

/** An upstream in front of the embedded workspace that holds every query create until `release()`. */
async function holdingCreates(target: string) {
  const held: (() => void)[] = [];
  let open = false;
  const forward = async (incoming: IncomingMessage, outgoing: ServerResponse, body: Buffer) => {
    const { host: _host, connection: _connection, "content-length": _length, ...headers } = incoming.headers;
    const init = { method: incoming.method ?? "GET", headers: headers as Record<string, string>, ...(body.length > 0 ? { body } : {}) };
    const answer = await fetch(`${target}${incoming.url}`, init);
    outgoing.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" });
    outgoing.end(Buffer.from(await answer.arrayBuffer()));
  };
  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", () => {
      const send = () => void forward(incoming, outgoing, Buffer.concat(chunks)).catch(() => outgoing.writeHead(502).end());
      if (incoming.method === "POST" && incoming.url?.startsWith("/queries") && !open) held.push(send);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get held() {
      return held.length;
    },
    release() {
      open = true;
      for (const send of held.splice(0)) send();
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let workspace: RunningWorkspace;
let upstream: Awaited<ReturnType<typeof holdingCreates>>;
let adapter: RunningAdapter;

beforeAll(async () => {
  // Slow steps: the tasks that start are still running when the test counts them.
  workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], apiKeys: [API_KEY, "sk-other-key"], stepDelayMs: 300 });
  upstream = await holdingCreates(workspace.url);
  adapter = await startAdapter(upstream.url, { MCP_TASKS_PER_CREDENTIAL: "2", MCP_TASK_POLL_INTERVAL_MS: "100", REALTIME: "off" });
});
afterAll(async () => {
  await adapter?.close();
  await upstream?.close();
  await workspace?.close();
});

it("starts no more tasks than the cap when one key asks for six at once, and refuses the rest with 429 before asking the workspace", async () => {
  const clients = await Promise.all(Array.from({ length: 6 }, () => mcpClientAs(adapter.url, API_KEY)));
  try {
    const outcomes: ("created" | string)[] = [];
    const calls = clients.map((client, index) =>
      createReasonTask(client, `How much annual leave do I get? (${index})`).then(
        () => outcomes.push("created"),
        (error: Error) => outcomes.push(error.message),
      ),
    );
    // Every call has either reached the workspace (held there) or been answered already.
    await waitFor(() => upstream.held + outcomes.length === 6, "each call held at the workspace or refused");
    const reachedWorkspace = upstream.held;
    upstream.release();
    await Promise.all(calls);
    expect(reachedWorkspace).toBe(2);
    expect(outcomes.filter((outcome) => outcome === "created")).toHaveLength(2);
    const refused = outcomes.filter((outcome) => outcome !== "created");
    expect(refused).toHaveLength(4);
    for (const message of refused) expect(message).toMatch(/Too many tasks running for this credential \(2/);
  } finally {
    await Promise.all(clients.map((client) => client.close()));
  }
});

it("gives a task's place back when it does not start (the workspace refused its create)", async () => {
  const client = await mcpClientAs(adapter.url, "sk-other-key");
  try {
    workspace.control.inject({ on: "create", kind: "status", status: 422, times: 3 });
    for (let attempt = 0; attempt < 3; attempt += 1) {
      await expect(createReasonTask(client, "How much annual leave do I get?")).rejects.toThrow();
    }
    // Three failed, none holds a place: the cap's two still start.
    const started = await Promise.all([createReasonTask(client, "Leave?"), createReasonTask(client, "Travel?")]);
    expect(started.map((created) => created.task.status)).toEqual(["working", "working"]);
    await expect(createReasonTask(client, "Expenses?")).rejects.toThrow(/Too many tasks running/);
  } finally {
    await client.close();
  }
});
