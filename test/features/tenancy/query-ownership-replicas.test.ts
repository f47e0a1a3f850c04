import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWith, REDIS } from "../../helpers/external-programs.js";
import { connectMcp } from "../../helpers/mcp-clients.js";
import { type Replica, type ReplicasOnRedis, replicasOnRedis } from "../../helpers/replica-process.js";
import { chatAs, createReasonTask, mcpClientAs, SHARED_KEY, TEAM_A, TEAM_F } from "../../helpers/tenancy.js";
import { waitFor } from "../../helpers/wait-for.js";

// docs/governance.md#whose-query-it-is across replicas: two replica processes sharing one real
// redis-server and the deployment's workspace key. A query started on one is its owner's on the
// other too: another key's `query_id` there (chat, MCP tool, MCP task) is a 404 that asks nothing of
// the workspace, and its owner continues it there.

describeWith(REDIS, "whose query it is, on two replicas sharing Redis", () => {
  let started: ReplicasOnRedis;
  const createsOf = (queryId: string) => started.workspace.control.creates.filter((create) => create.body.id === queryId).length;

  beforeAll(async () => {
    const environment = (url: string) => ({ ...SHARED_KEY, REDIS_URL: url, REDIS_KEY_PREFIX: `ownership-${process.pid}:`, POLL_INTERVAL_MIN_MS: "20", POLL_INTERVAL_MAX_MS: "100" });
    started = await replicasOnRedis(2, 5, environment);
  }, 60_000);
  afterAll(() => started?.stop());

  it("refuses another key's query_id on the other replica in chat, an MCP tool and an MCP task, and lets its owner continue there", async () => {
    const { redis } = started;
    const [one, other] = started.replicas as [Replica, Replica];
    const asked = await chatAs(one.url, TEAM_A, { messages: [{ role: "user", content: "SECRET-QUESTION-123: what is the travel policy?" }] });
    expect(asked.status).toBe(200);
    const queryId = asked.queryId as string;

    const stolen = await chatAs(other.url, TEAM_F, { query_id: queryId, messages: [{ role: "user", content: "What did I ask before?" }] });
    expect(stolen.status).toBe(404);
    expect(stolen.body.error.code).toBe("query_not_found");
    // Known to the other replica through Redis: a principal's hash and the workspace, under the query's key.
    const owner = JSON.parse((await redis.client.get(`ownership-${process.pid}:query-owner:{${queryId}}`)) ?? "null");
    expect(owner).toEqual({ principal: expect.any(String), workspace: "acme" });
    const tools = await connectMcp("2025-11-25", `${other.url}/mcp/acme`, { authorization: `Bearer ${TEAM_F}` });
    const tasks = await mcpClientAs(other.url, TEAM_F);
    try {
      const refused = await tools.callTool("ask", { question: "What did I ask before?", query_id: queryId });
      expect(refused.isError).toBe(true);
      await expect(createReasonTask(tasks, "What did I ask before?", queryId)).rejects.toThrow(/No query .* that this caller started/);
    } finally {
      await Promise.all([tools.close(), tasks.close()]);
    }
    expect(createsOf(queryId)).toBe(1);

    const own = await chatAs(other.url, TEAM_A, { query_id: queryId, messages: [{ role: "user", content: "What did I ask before?" }] });
    expect(own.status).toBe(200);
    expect(own.body.choices[0].message.content).toContain("SECRET-QUESTION-123");
    const ownTasks = await mcpClientAs(other.url, TEAM_A);
    try {
      expect((await createReasonTask(ownTasks, "And then?", queryId)).task.status).toBe("working");
      await waitFor(() => createsOf(queryId) === 3, "the owner's task continues the query");
    } finally {
      await ownTasks.close();
    }
  });
});
