import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningWorkspace, startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import { connectMcp } from "../../helpers/mcp-clients.js";
import { API_KEY, FIXTURE_DOCUMENTS, type RunningAdapter, startAdapter } from "../../helpers/start-stack.js";
import { chatAs, createReasonTask, GATEWAY, headersOf, mcpClientAs, SHARED_KEY, TEAM_A, TEAM_F } from "../../helpers/tenancy.js";
import { waitFor } from "../../helpers/wait-for.js";

// docs/governance.md#whose-query-it-is (issue 56, security review M1): with one workspace credential
// for every caller (WORKSPACE_API_KEY and listed keys, a gateway's key), a query id names a thread
// the workspace cannot tell apart by caller. A query belongs to whoever started it: another caller's
// `query_id` — in a chat body, an MCP tool call, an MCP task — is a 404 that asks nothing of the
// workspace; its owner still continues it. With the client's own key upstream, the workspace decides.

const SECRET = "SECRET-QUESTION-123: what is the travel policy?";

let workspace: RunningWorkspace;
let adapter: RunningAdapter;

/** The creates the workspace saw for `queryId` (a new query or a continuation). */
const createsOf = (queryId: string) => workspace.control.creates.filter((create) => create.body.id === queryId).length;

/** A first question of team-a's: the query id its answer names. */
async function teamAsks(url: string, question = SECRET): Promise<string> {
  const asked = await chatAs(url, TEAM_A, { messages: [{ role: "user", content: question }] });
  expect(asked.status).toBe(200);
  return asked.queryId as string;
}

beforeAll(async () => {
  workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme", "globex"], apiKeys: [API_KEY, "sk-other-key"], stepDelayMs: 5 });
  adapter = await startAdapter(workspace.url, SHARED_KEY);
});
afterAll(async () => {
  await adapter?.close();
  await workspace?.close();
});

describe("a query id under a shared workspace credential", () => {
  it("in a chat body from another key is a 404 that asks nothing of the workspace; its owner continues it", async () => {
    const queryId = await teamAsks(adapter.url);
    expect(createsOf(queryId)).toBe(1);
    const stolen = await chatAs(adapter.url, TEAM_F, { query_id: queryId, messages: [{ role: "user", content: "What did I ask before?" }] });
    expect(stolen.status).toBe(404);
    expect(stolen.body.error).toMatchObject({ type: "not_found_error", param: "query_id", code: "query_not_found" });
    expect(stolen.body.detail).toMatch(/No query .* that this caller started/);
    expect(JSON.stringify(stolen.body)).not.toContain("SECRET-QUESTION-123");
    expect(stolen.queryId).toBeNull();
    expect(createsOf(queryId)).toBe(1);
    // Streamed, the same 404 before any byte of a stream.
    const streamed = await chatAs(adapter.url, TEAM_F, { query_id: queryId, stream: true, messages: [{ role: "user", content: "And?" }] });
    expect(streamed.status).toBe(404);
    const own = await chatAs(adapter.url, TEAM_A, { query_id: queryId, messages: [{ role: "user", content: "What did I ask before?" }] });
    expect(own.status).toBe(200);
    expect(own.queryId).toBe(queryId);
    expect(own.body.choices[0].message.content).toContain("SECRET-QUESTION-123");
    expect(createsOf(queryId)).toBe(2);
  });

  it("names no more than the caller's own: an unknown id, and the owner's id in another workspace, are the same 404", async () => {
    const unknown = await chatAs(adapter.url, TEAM_F, { query_id: "never-started-here", messages: [{ role: "user", content: "Hi" }] });
    const queryId = await teamAsks(adapter.url);
    const elsewhere = await chatAs(adapter.url, TEAM_A, { query_id: queryId, messages: [{ role: "user", content: "Hi" }] }, { "service-workspace": "globex" });
    expect([unknown.status, elsewhere.status]).toEqual([404, 404]);
    expect(unknown.body.error.code).toBe(elsewhere.body.error.code);
    expect(createsOf("never-started-here") + createsOf(queryId)).toBe(1);
  });

  it("keeps a gateway's identities apart, and the gateway's own requests from theirs", async () => {
    const alice = { "x-litellm-user_api_key_user_id": "alice" };
    const asked = await chatAs(adapter.url, GATEWAY, { messages: [{ role: "user", content: SECRET }] }, alice);
    const queryId = asked.queryId as string;
    const bob = await chatAs(adapter.url, GATEWAY, { query_id: queryId, messages: [{ role: "user", content: "And?" }] }, { "x-litellm-user_api_key_user_id": "bob" });
    const gateway = await chatAs(adapter.url, GATEWAY, { query_id: queryId, messages: [{ role: "user", content: "And?" }] });
    expect([bob.status, gateway.status]).toEqual([404, 404]);
    expect((await chatAs(adapter.url, GATEWAY, { query_id: queryId, messages: [{ role: "user", content: "And?" }] }, alice)).status).toBe(200);
    expect(createsOf(queryId)).toBe(2);
  });

  it("in an MCP tool call from another key is the tool error the SDK shows, and nothing is asked; its owner continues it", async () => {
    const queryId = await teamAsks(adapter.url);
    const thief = await connectMcp("2025-11-25", `${adapter.url}/mcp/acme`, { authorization: `Bearer ${TEAM_F}` });
    const owner = await connectMcp("2025-11-25", `${adapter.url}/mcp/acme`, { authorization: `Bearer ${TEAM_A}` });
    try {
      const refused = await thief.callTool("ask", { question: "What did I ask before?", query_id: queryId });
      expect(refused.isError).toBe(true);
      expect(refused.content[0].text).toMatch(/No query .* that this caller started/);
      expect(createsOf(queryId)).toBe(1);
      const own = await owner.callTool("ask", { question: "What did I ask before?", query_id: queryId });
      expect(own.isError).toBeFalsy();
      expect(own.structuredContent.query_id).toBe(queryId);
      expect(own.structuredContent.answer).toContain("SECRET-QUESTION-123");
      expect(createsOf(queryId)).toBe(2);
    } finally {
      await Promise.all([thief.close(), owner.close()]);
    }
  });

  it("in an MCP task's creation from another key is a JSON-RPC error and no task, and nothing is asked; its owner's task continues it", async () => {
    const queryId = await teamAsks(adapter.url);
    const thief = await mcpClientAs(adapter.url, TEAM_F);
    const owner = await mcpClientAs(adapter.url, TEAM_A);
    try {
      await expect(createReasonTask(thief, "And what did I ask before?", queryId)).rejects.toThrow(/No query .* that this caller started/);
      expect(createsOf(queryId)).toBe(1);
      const created = await createReasonTask(owner, "And what did I ask before?", queryId);
      expect(created.task.status).toBe("working");
      await waitFor(() => createsOf(queryId) === 2, "the owner's task continues the query");
    } finally {
      await Promise.all([thief.close(), owner.close()]);
    }
  });

  it("cannot be overridden through the query create fields, and passes none of them unless the deployment lists them", async () => {
    const queryId = await teamAsks(adapter.url);
    const asks = (key: string, query: Record<string, unknown>) => chatAs(adapter.url, key, { query, messages: [{ role: "user", content: "What did I ask before?" }] });
    const overriding = await asks(TEAM_F, { id: queryId });
    expect(overriding.status).toBe(422);
    expect(overriding.body.detail[0].loc).toEqual(["body", "query", "id"]);
    const bound = await asks(TEAM_F, { bound_artifacts: { ids: ["artifact-1"] } });
    expect(bound.status).toBe(422);
    expect(bound.body.detail[0]).toMatchObject({ loc: ["body", "query", "bound_artifacts"], type: "extra_forbidden" });
    expect(createsOf(queryId)).toBe(1);
    const listing = await startAdapter(workspace.url, { ...SHARED_KEY, SHARED_KEY_QUERY_FIELDS: "follow_up" });
    try {
      expect((await asks(TEAM_F, { follow_up: true })).status).toBe(422);
      const allowed = await chatAs(listing.url, TEAM_F, { query: { follow_up: true }, messages: [{ role: "user", content: "Leave?" }] });
      expect(allowed.status).toBe(200);
      expect(workspace.control.creates.find((create) => create.body.id === allowed.queryId)?.body.follow_up).toBe(true);
    } finally {
      await listing.close();
    }
  });

  it("stays its owner's whichever way the adapter created it: Responses, a background response, n > 1, an MCP answer", async () => {
    const responded = await fetch(`${adapter.url}/v1/responses`, { method: "POST", headers: headersOf(TEAM_A), body: JSON.stringify({ model: "ask", input: SECRET }) });
    const background = await fetch(`${adapter.url}/v1/responses`, { method: "POST", headers: headersOf(TEAM_A), body: JSON.stringify({ model: "ask", input: SECRET, background: true }) });
    const several = await chatAs(adapter.url, TEAM_A, { n: 2, messages: [{ role: "user", content: SECRET }] });
    const client = await connectMcp("2025-11-25", `${adapter.url}/mcp/acme`, { authorization: `Bearer ${TEAM_A}` });
    const viaMcp = await client.callTool("ask", { question: SECRET }).finally(() => client.close());
    const ids = [
      responded.headers.get("service-query-id"),
      background.headers.get("service-query-id"),
      ...(several.queryId as string).split(", "),
      viaMcp.structuredContent.query_id,
    ] as string[];
    expect(ids).toHaveLength(5);
    expect(new Set(ids).size).toBe(5);
    await responded.text();
    await background.text();
    for (const queryId of ids) {
      expect((await chatAs(adapter.url, TEAM_F, { query_id: queryId, messages: [{ role: "user", content: "And?" }] })).status).toBe(404);
      const own = await chatAs(adapter.url, TEAM_A, { query_id: queryId, messages: [{ role: "user", content: "And?" }] });
      expect(own.status).toBe(200);
    }
  });
});

describe("a query id with the client's own key upstream (pass-through)", () => {
  it("goes to the workspace as before, which decides", async () => {
    const passThrough = await startAdapter(workspace.url, { REALTIME: "off" });
    try {
      const asked = await chatAs(passThrough.url, API_KEY, { messages: [{ role: "user", content: SECRET }] });
      const queryId = asked.queryId as string;
      const other = await chatAs(passThrough.url, "sk-other-key", { query_id: queryId, query: { follow_up: true }, messages: [{ role: "user", content: "And?" }] });
      // The embedded workspace keeps no thread per key: it continues it, as a workspace that does not tell keys apart would.
      expect(other.status).toBe(200);
      expect(createsOf(queryId)).toBe(2);
    } finally {
      await passThrough.close();
    }
  });
});
