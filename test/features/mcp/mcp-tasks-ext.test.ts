import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient, resultFromTaskOutcome, type TaskEnabledSession } from "@modelcontextprotocol/ext-tasks/client";
import { CancelTaskResultV1Schema, GetTaskResultV1Schema } from "@modelcontextprotocol/ext-tasks/core/v1";
import { CancelTaskResultV2Schema, CreateTaskResultV2Schema, GetTaskResultV2Schema } from "@modelcontextprotocol/ext-tasks/core/v2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_KEY, type Stack, startStack } from "../../helpers/start-stack.js";
import { waitFor } from "../../helpers/wait-for.js";

// MCP tasks (docs/mcp.md#long-answers-as-tasks) driven by the tasks extension's own client,
// `@modelcontextprotocol/ext-tasks` sessions over the official v2 client, in both generations:
// v1 on 2025-11-25 (core tasks), v2 on 2026-07-28 (the `io.modelcontextprotocol/tasks`
// extension, its requests framed and sent raw as the package asks). Every task reply the server
// gave is checked against the package's zod schemas of its generation.

let stack: Stack;
const auth = { authorization: `Bearer ${API_KEY}`, "service-workspace": "acme" };
const info = { name: "ext-tasks-test", version: "1.0.0" };

beforeAll(async () => {
  stack = await startStack({ QUERY_TIMEOUT_MS: "8000", MCP_TASK_POLL_INTERVAL_MS: "100" });
});
afterAll(() => stack.close());

/** Every JSON-RPC request and reply about tasks the session made, for the schema checks. */
type Exchange = { method: string; reply: any };

/** A raw POST of one framed 2026-07-28 request, as the package's `rawDispatch` asks: the headers the transport would send. */
function rawDispatch(url: string, exchanges: Exchange[]) {
  return async (request: any, options?: { signal?: AbortSignal; context?: { headers?: Record<string, string> } }) => {
    const name = request.method === "tools/call" ? request.params.name : request.params?.taskId;
    const headers = new Headers({
      ...auth,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": request.method,
      ...(name === undefined ? {} : { "mcp-name": name }),
    });
    for (const [header, value] of Object.entries(options?.context?.headers ?? {})) headers.set(header, value);
    const response = await fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", id: request.id ?? 1, ...request }),
      signal: options?.signal ?? null,
    });
    const text = await response.text();
    const body = response.headers.get("content-type")?.startsWith("text/event-stream")
      ? JSON.parse(text.split("\n").filter((line) => line.startsWith("data: ")).at(-1)!.slice(6))
      : JSON.parse(text);
    exchanges.push({ method: request.method, reply: body.result ?? body.error });
    return body.error ? { kind: "error" as const, error: body.error } : { kind: "result" as const, result: body.result };
  };
}

async function sessionOn(revision: "2025-11-25" | "2026-07-28", exchanges: Exchange[]): Promise<{ session: TaskEnabledSession; client: Client }> {
  const client = new Client(info, { versionNegotiation: revision === "2026-07-28" ? { mode: { pin: revision } } : { mode: "legacy" } });
  const recording = async (input: string | URL | Request, init?: RequestInit) => {
    const response = await fetch(input, init);
    const sent = typeof init?.body === "string" ? JSON.parse(init.body) : undefined;
    if (sent?.method?.startsWith("tasks/") || sent?.params?.task) {
      const copy = response.clone();
      const text = await copy.text();
      const data = copy.headers.get("content-type")?.startsWith("text/event-stream") ? text.split("\n").filter((line) => line.startsWith("data: ")).at(-1)?.slice(6) : text;
      const body = data ? JSON.parse(data) : {};
      exchanges.push({ method: sent.params?.task ? "tools/call" : sent.method, reply: body.result ?? body.error });
    }
    return response;
  };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.url}/mcp`), { requestInit: { headers: auth }, fetch: recording }));
  const session =
    revision === "2026-07-28"
      ? createTaskSessionFromClient(client, {
          endpointId: "adapter-test",
          rawDispatch: rawDispatch(`${stack.url}/mcp`, exchanges),
          v2RequestFraming: { protocolVersion: "2026-07-28", clientInfo: info, clientCapabilities: {} },
        })
      : createTaskSessionFromClient(client, { endpointId: "adapter-test" });
  return { session, client };
}

describe.each(["2025-11-25", "2026-07-28"] as const)("ext-tasks sessions on %s", (revision) => {
  const exchanges: Exchange[] = [];
  let session: TaskEnabledSession;
  let client: Client;
  beforeAll(async () => {
    ({ session, client } = await sessionOn(revision, exchanges));
  });
  afterAll(async () => {
    await session.close();
    await client.close();
  });

  it("sees the server's tasks: execution and cancellation", () => {
    expect(session.capabilities).toMatchObject({ execution: true, cancellation: true });
  });

  it("runs reason as a task and settles it with the tool result", async () => {
    const execution = await session.callTool("reason", { question: "How are security incidents reported?" }, { task: { preference: "require" } });
    expect(execution.kind).toBe("task");
    const { outcome } = await execution.settle();
    const result = resultFromTaskOutcome(outcome) as any;
    expect(result.structuredContent.mode).toBe("reason");
    expect(result.structuredContent.answer).toContain("within one hour");
  });

  it("cancels a task that is working, and reads it as cancelled", async () => {
    const execution = await session.callTool("reason", { question: "leave [fault:stall]" }, { task: { preference: "require" } });
    expect(execution.kind).toBe("task");
    await waitFor(() => stack.adapter.watcher.waitingQueries > 0, "the task waiting for its query");
    await execution.cancel();
    const task = await session.task(execution.handle!.taskId).snapshot();
    expect(task.status).toBe("cancelled");
    await waitFor(() => stack.adapter.watcher.waitingQueries === 0, "the task's wait to stop");
  });

  it("gave replies that fit the package's schemas of this generation", () => {
    const methods = new Set(exchanges.map((exchange) => exchange.method));
    expect(methods).toEqual(new Set(["tools/call", "tasks/get", "tasks/cancel", ...(revision === "2025-11-25" ? ["tasks/result"] : [])]));
    for (const { method, reply } of exchanges as { method: string; reply: any }[]) {
      if (revision === "2026-07-28") {
        if (method === "tools/call") CreateTaskResultV2Schema.parse(reply);
        if (method === "tasks/get") GetTaskResultV2Schema.parse(reply);
        if (method === "tasks/cancel") CancelTaskResultV2Schema.parse(reply);
      } else {
        if (method === "tasks/get") GetTaskResultV1Schema.parse(reply);
        if (method === "tasks/cancel") CancelTaskResultV1Schema.parse(reply);
      }
    }
  });
});

describe("2026-07-28 without the extension declared", () => {
  const post = (body: object, headers: Record<string, string>): Promise<{ status: number; json(): Promise<any> }> =>
    fetch(`${stack.url}/mcp`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28", ...headers },
      body: JSON.stringify(body),
    });
  const envelope = (extensions: object) => ({
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": info,
    "io.modelcontextprotocol/clientCapabilities": { extensions },
  });

  it("answers reason synchronously, as today", async () => {
    const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "reason", arguments: { question: "How much annual leave do I get?" }, _meta: envelope({}) } };
    const reply = await (await post(call, { "mcp-method": "tools/call", "mcp-name": "reason" })).json();
    expect(reply.result.resultType).toBe("complete");
    expect(reply.result.structuredContent.mode).toBe("reason");
  });

  it("refuses tasks/get with -32021, naming the extension it needs", async () => {
    const taskId = `task_${"0".repeat(48)}`;
    const get = { jsonrpc: "2.0", id: 2, method: "tasks/get", params: { taskId, _meta: envelope({}) } };
    const reply = await (await post(get, { "mcp-method": "tasks/get", "mcp-name": taskId })).json();
    expect(reply.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } } });
  });

  it("with the extension: the flat task at once, tasks/get with the result inline, tasks/update acknowledged", async () => {
    const tasks = envelope({ "io.modelcontextprotocol/tasks": {} });
    const call = { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "build", arguments: { question: "Write a short onboarding note about expenses" }, _meta: tasks } };
    const created = CreateTaskResultV2Schema.parse((await (await post(call, { "mcp-method": "tools/call", "mcp-name": "build" })).json()).result);
    const { taskId } = created;
    const get = (id: number) => ({ jsonrpc: "2.0", id, method: "tasks/get", params: { taskId, _meta: tasks } });
    let detailed: any;
    await waitFor(async () => {
      detailed = GetTaskResultV2Schema.parse((await (await post(get(4), { "mcp-method": "tasks/get", "mcp-name": taskId })).json()).result);
      return detailed.status !== "working";
    }, "the task to end");
    expect(detailed.status).toBe("completed");
    expect(detailed.result.structuredContent.mode).toBe("build");
    const update = { jsonrpc: "2.0", id: 5, method: "tasks/update", params: { taskId, inputResponses: {}, _meta: tasks } };
    expect((await (await post(update, { "mcp-method": "tasks/update", "mcp-name": taskId })).json()).result).toMatchObject({ resultType: "complete" });
    const cancel = { jsonrpc: "2.0", id: 6, method: "tasks/cancel", params: { taskId, _meta: tasks } };
    // Cancelling an ended task is acknowledged the same (idempotent; -32602 is for unknown ids only), and changes nothing.
    expect((await (await post(cancel, { "mcp-method": "tasks/cancel", "mcp-name": taskId })).json()).result).toMatchObject({ resultType: "complete" });
    expect((await (await post(get(8), { "mcp-method": "tasks/get", "mcp-name": taskId })).json()).result.status).toBe("completed");
    // Mcp-Name must name the task (for load balancers routing by it): otherwise the SDK refuses the request.
    const misrouted = await post(get(7), { "mcp-method": "tasks/get", "mcp-name": "task_elsewhere" });
    expect(misrouted.status).toBe(400);
  });
});
