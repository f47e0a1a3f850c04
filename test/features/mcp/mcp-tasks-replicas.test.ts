import { Client } from "mcp-sdk-v1/client/index.js";
import { StreamableHTTPClientTransport } from "mcp-sdk-v1/client/streamableHttp.js";
import { CallToolResultSchema, CreateTaskResultSchema } from "mcp-sdk-v1/types.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type RunningWorkspace, startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import { describeWith, REDIS } from "../../helpers/external-programs.js";
import { type RedisServer, startRedis } from "../../helpers/redis-server.js";
import { type Replica, startReplica, stopAll } from "../../helpers/replica-process.js";
import { API_KEY, FIXTURE_DOCUMENTS } from "../../helpers/start-stack.js";
import { waitFor } from "../../helpers/wait-for.js";

// MCP tasks across replicas (docs/mcp.md#long-answers-as-tasks): two replica processes on one
// real redis-server. A task created on one is polled, followed and cancelled on the other; a
// replica SIGKILLed while it runs a task is survived: the other takes the task over and completes
// it, following the same workspace query.

const auth = { authorization: `Bearer ${API_KEY}`, "service-workspace": "acme" };

async function connect(replica: Replica): Promise<Client> {
  const client = new Client({ name: "tasks-replicas-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${replica.url}/mcp`), { requestInit: { headers: auth } }));
  return client;
}

async function createTask(client: Client, question: string): Promise<string> {
  const created = await client.request({ method: "tools/call", params: { name: "reason", arguments: { question }, task: {} } }, CreateTaskResultSchema);
  return created.task.taskId;
}

describeWith(REDIS, "MCP tasks on two replicas sharing Redis", () => {
  let redis: RedisServer;
  let workspace: RunningWorkspace;
  let replicas: Replica[] = [];
  const clients: Client[] = [];
  beforeAll(async () => {
    redis = await startRedis();
    // Slow enough that a task is still running when its replica is killed.
    workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], apiKeys: [API_KEY], stepDelayMs: 400 });
    const environment = {
      REDIS_URL: redis.url,
      REDIS_KEY_PREFIX: `tasks-${process.pid}:`,
      POLL_INTERVAL_MIN_MS: "50",
      POLL_INTERVAL_MAX_MS: "200",
      MCP_TASK_POLL_INTERVAL_MS: "200",
    };
    replicas = await Promise.all([startReplica(workspace.url, environment), startReplica(workspace.url, environment)]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await stopAll(replicas);
    await workspace?.close();
    await redis?.stop();
  });

  it("creates on one replica, polls and cancels on the other", async () => {
    const [one, other] = replicas as [Replica, Replica];
    const [creator, poller] = [await connect(one), await connect(other)];
    clients.push(creator, poller);
    const taskId = await createTask(creator, "How much annual leave do I get?");
    await waitFor(async () => (await poller.experimental.tasks.getTask(taskId)).statusMessage !== undefined, "a step seen from the other replica");
    const cancelled = await poller.experimental.tasks.cancelTask(taskId);
    expect(cancelled.status).toBe("cancelled");
    expect((await creator.experimental.tasks.getTask(taskId)).status).toBe("cancelled");
    // And the other way round: created on the second, its blocking result followed on the first.
    const second = await createTask(poller, "How are security incidents reported?");
    const result = (await creator.experimental.tasks.getTaskResult(second, CallToolResultSchema)) as any;
    expect(result.structuredContent.answer).toContain("within one hour");
  }, 60_000);

  it("completes a task whose replica is killed, on the other replica, with one workspace query", async () => {
    const [doomed, survivor] = replicas as [Replica, Replica];
    const [creator, follower] = [await connect(doomed), await connect(survivor)];
    clients.push(creator, follower);
    const before = workspace.control.creates.length;
    const taskId = await createTask(creator, "How much annual leave do I get?");
    await waitFor(async () => (await follower.experimental.tasks.getTask(taskId)).statusMessage !== undefined, "the task's first step");
    doomed.child.kill("SIGKILL");
    await new Promise((resolve) => doomed.child.once("exit", resolve));
    // The blocking tasks/result on the survivor takes the task over once the dead replica's lease ran out.
    const result = (await follower.experimental.tasks.getTaskResult(taskId, CallToolResultSchema, { timeout: 60_000 })) as any;
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent.answer).toContain("25 days");
    expect(result.structuredContent.steps.length).toBeGreaterThan(1);
    expect(new Set(result.structuredContent.steps).size).toBe(result.structuredContent.steps.length);
    expect((await follower.experimental.tasks.getTask(taskId)).status).toBe("completed");
    expect(workspace.control.creates.length - before).toBe(1);
  }, 90_000);
});
