import { CancelTaskResultV1Schema, CreateTaskResultV1Schema, GetTaskResultV1Schema } from "@modelcontextprotocol/ext-tasks/core/v1";
import { Client } from "mcp-sdk-v1/client/index.js";
import { StreamableHTTPClientTransport } from "mcp-sdk-v1/client/streamableHttp.js";
import { CallToolResultSchema } from "mcp-sdk-v1/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { documentReader } from "../../../src/embedded-workspace/read-document.js";
import { API_KEY, FIXTURE_DOCUMENTS, type Stack, startStack } from "../../helpers/start-stack.js";
import { waitFor } from "../../helpers/wait-for.js";

// MCP tasks (docs/mcp.md#long-answers-as-tasks) driven by the MCP SDK v1's own 2025-11-25 tasks
// client: create, poll, the blocking result, cancel; each reply also checked against the tasks
// extension package's zod schemas of that revision.

let stack: Stack;
const auth = { authorization: `Bearer ${API_KEY}`, "service-workspace": "acme" };

async function connect(headers: Record<string, string> = auth): Promise<Client> {
  const client = new Client({ name: "tasks-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.url}/mcp`), { requestInit: { headers } }));
  return client;
}

beforeAll(async () => {
  let listening = "";
  stack = await startStack({ QUERY_TIMEOUT_MS: "8000", MCP_TASK_POLL_INTERVAL_MS: "100" }, {}, { documents: documentReader([FIXTURE_DOCUMENTS]), publicUrl: () => listening });
  listening = stack.url;
});
afterAll(() => stack.close());

describe("2025-11-25 tasks, with the MCP SDK v1's tasks client", () => {
  let client: Client;
  beforeAll(async () => {
    client = await connect();
  });
  afterAll(() => client.close());

  it("advertises tasks for tools/call with cancel, and reason and build as optional tasks", async () => {
    expect(client.getServerCapabilities()?.tasks).toEqual({ cancel: {}, requests: { tools: { call: {} } } });
    const tools = (await client.listTools()).tools;
    const support = Object.fromEntries(tools.map((tool) => [tool.name, tool.execution?.taskSupport]));
    expect(support).toEqual({ ask: undefined, reason: "optional", build: "optional", search: undefined, fetch: undefined });
  });

  it("runs reason as a task: created at once, polled, its result the tool result tools/call gives", async () => {
    const messages: any[] = [];
    for await (const message of client.experimental.tasks.callToolStream(
      { name: "reason", arguments: { question: "How are security incidents reported?" } },
      CallToolResultSchema,
      { task: { ttl: 60_000 } },
    )) {
      messages.push(message);
    }
    const created = messages[0];
    expect(created.type).toBe("taskCreated");
    expect(CreateTaskResultV1Schema.parse({ task: created.task }).task).toMatchObject({ status: "working", ttl: 60_000, pollInterval: 100 });
    expect(created.task.taskId).toMatch(/^task_[0-9a-f]{48}$/);
    const statuses = messages.filter((message) => message.type === "taskStatus").map((message) => message.task);
    for (const status of statuses) GetTaskResultV1Schema.parse(status);
    expect(statuses.at(-1).status).toBe("completed");
    const result = messages.at(-1);
    expect(result.type).toBe("result");
    expect(result.result.isError).toBeFalsy();
    expect(result.result.structuredContent.mode).toBe("reason");
    expect(result.result.structuredContent.answer).toContain("within one hour");
    expect(result.result.content[0].text).toMatch(/Sources:\n\[1\] security-policy\.md/);
    expect(result.result._meta["io.modelcontextprotocol/related-task"]).toEqual({ taskId: created.task.taskId });
  });

  it("gives the latest step as statusMessage while it works, and blocks tasks/result until it ends", async () => {
    const created = await client.request(
      { method: "tools/call", params: { name: "build", arguments: { question: "Write a short onboarding note about expenses" }, task: {} } },
      CreateTaskResultV1Schema as any,
    );
    const taskId = (created as any).task.taskId as string;
    await waitFor(async () => (await client.experimental.tasks.getTask(taskId)).statusMessage !== undefined, "a step as the status message");
    const result = (await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)) as any;
    expect(result.structuredContent.mode).toBe("build");
    const task = await client.experimental.tasks.getTask(taskId);
    expect(task.status).toBe("completed");
    expect(task.statusMessage).toBe(result.structuredContent.steps.at(-1));
  });

  it("cancels a working task: cancelled before the reply, its wait stopped; cancelling again is invalid params", async () => {
    const created = (await client.request(
      { method: "tools/call", params: { name: "reason", arguments: { question: "leave [fault:stall]" }, task: { ttl: 30_000 } } },
      CreateTaskResultV1Schema as any,
    )) as any;
    await waitFor(() => stack.adapter.watcher.waitingQueries > 0, "the task waiting for its query");
    const cancelled = CancelTaskResultV1Schema.parse(await client.experimental.tasks.cancelTask(created.task.taskId));
    expect(cancelled.status).toBe("cancelled");
    expect((await client.experimental.tasks.getTask(created.task.taskId)).status).toBe("cancelled");
    await waitFor(() => stack.adapter.watcher.waitingQueries === 0, "the task's wait to stop");
    await expect(client.experimental.tasks.cancelTask(created.task.taskId)).rejects.toMatchObject({ code: -32602 });
  });

  it("ends a task whose query fails as failed, the error text its statusMessage, and tasks/result the tool error", async () => {
    const created = (await client.request(
      { method: "tools/call", params: { name: "reason", arguments: { question: "leave [fault:failed]" }, task: {} } },
      CreateTaskResultV1Schema as any,
    )) as any;
    const result = (await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema)) as any;
    expect(result.isError).toBe(true);
    const task = await client.experimental.tasks.getTask(created.task.taskId);
    expect(task.status).toBe("failed");
    expect(task.statusMessage).toBe(result.content[0].text);
  });

  it("does not know another credential's task, nor a task id it never gave", async () => {
    const created = (await client.request(
      { method: "tools/call", params: { name: "reason", arguments: { question: "How much annual leave do I get?" }, task: {} } },
      CreateTaskResultV1Schema as any,
    )) as any;
    const other = await connect({ authorization: "Bearer sk-other-key", "service-workspace": "acme" });
    try {
      await expect(other.experimental.tasks.getTask(created.task.taskId)).rejects.toMatchObject({ code: -32602 });
      await expect(other.experimental.tasks.cancelTask(created.task.taskId)).rejects.toMatchObject({ code: -32602 });
    } finally {
      await other.close();
    }
    await expect(client.experimental.tasks.getTask(`task_${"0".repeat(48)}`)).rejects.toMatchObject({ code: -32602 });
    await expect(client.experimental.tasks.getTask("resp_not-a-task")).rejects.toMatchObject({ code: -32602 });
  });

  it("refuses a task of a tool that does not run as one (-32601), and answers the same call plainly without one", async () => {
    await expect(
      client.request({ method: "tools/call", params: { name: "ask", arguments: { question: "How much annual leave do I get?" }, task: {} } }, CreateTaskResultV1Schema as any),
    ).rejects.toMatchObject({ code: -32601 });
    const plain = (await client.callTool({ name: "reason", arguments: { question: "How much annual leave do I get?" } })) as any;
    expect(plain.structuredContent.mode).toBe("reason");
  });
});
