import type { ServerResponse } from "node:http";
import { taskWire } from "../../dialects/mcp/task-wire.js";
import type { TaskView } from "../../dialects/mcp/task-state.js";
import { type AdapterError, toAdapterError } from "../../errors/adapter-error.js";
import { endWithText, sendJsonRpcError } from "../error-response.js";
import type { RequestContext } from "../request-context.js";
import type { Beating, KeepAliveSweep } from "../sse-writer.js";
import { jsonRpcResult, type ServerIdentity } from "./json-rpc-result.js";
import type { McpTasks, NewTask, TaskCaller } from "./mcp-tasks.js";
import { type TaskRequest, TASKS_REVISION_2025, TASKS_REVISION_2026 } from "./task-request.js";

/** A JSON-RPC request id. */
type RequestId = string | number;

/** JSON-RPC's invalid params: an unknown (or another credential's, or expired) task, a cancel of an ended one. */
const INVALID_PARAMS = -32602;

/** What answering a task request needs of the MCP edge. */
export interface TaskReplyContext {
  tasks: McpTasks;
  /** Stamped on 2026-07-28 results, as the SDK stamps them. */
  identity: ServerIdentity;
  /** Keep-alives of a blocking `tasks/result` stream. */
  sweep: KeepAliveSweep;
}

/** One request about tasks, from an admitted caller: what `answerTaskRequest` answers on their behalf. */
export interface TaskExchange {
  response: ServerResponse;
  /** The request's context: a task it creates is run with it (no response: the task outlives the request). */
  context: RequestContext;
  caller: TaskCaller;
  /** Whether the request accepts an SSE stream (a blocking `tasks/result` then shows life while it waits). */
  acceptsStream: boolean;
  /** Aborted when the client leaves. */
  signal: AbortSignal;
  /** Answers a task's creation the workspace refused the key of as the OAuth edge asks (`/oauth/mcp`); does nothing elsewhere. */
  refuseKey(failure: AdapterError): Promise<void>;
  /** What a call that creates a task adds to the caller (its tool, the card's workspace). */
  task: Omit<NewTask, keyof TaskCaller | "context" | "tool" | "mode" | "input" | "ttlMs">;
}

/**
 * Answers a request about tasks (docs/mcp.md#long-answers-as-tasks), written here (`jsonRpcResult`): the created task at once (2025-11-25's `{task}`, 2026-07-28's flat one);
 * `tasks/get`; 2025's blocking `tasks/result` (an SSE stream with keep-alives while it waits, the
 * tool result tied to its task at the end); `tasks/cancel` (2025: the cancelled task, invalid params
 * for an ended one; 2026: the empty acknowledgement, for an ended one too); 2026's `tasks/update`
 * acknowledged. A task
 * of another credential, or past its TTL, is invalid params "not found", as one that never was.
 */
export async function answerTaskRequest(request: TaskRequest, exchange: TaskExchange, context: TaskReplyContext): Promise<void> {
  const { response } = exchange;
  if (request.kind === "refuse") {
    sendRpcError(response, request.id, request.code, request.message, request.data);
    return;
  }
  const revision = request.era === "2025" ? TASKS_REVISION_2025 : TASKS_REVISION_2026;
  const reply = (result: unknown) => {
    sendText(response, jsonRpcResult(request.id, revision, result, context.identity));
  };
  try {
    if (request.kind === "create") {
      const task = request.call.task;
      if (!task) throw new Error("A tool that does not run as a task reached the tasks");
      const view = await context.tasks.create({
        ...exchange.caller,
        ...exchange.task,
        context: exchange.context,
        tool: request.call.tool.name,
        mode: task.mode,
        input: task.input,
        ttlMs: request.ttlMs,
      });
      reply(request.era === "2025" ? taskWire.created2025(view) : taskWire.created2026(view));
      return;
    }
    const found = await context.tasks.find(request.taskId, exchange.caller);
    if (!found) {
      sendRpcError(response, request.id, INVALID_PARAMS, `Task not found: ${request.taskId}`);
      return;
    }
    switch (request.method) {
      case "tasks/get":
        reply(request.era === "2025" ? taskWire.task2025(found.view) : taskWire.detailed2026(found.view));
        return;
      case "tasks/update":
        // No task here ever asks for input: responses to requests it did not make are ignored.
        reply({ resultType: "complete" });
        return;
      case "tasks/cancel": {
        const outcome = found.view.status === "working" ? await context.tasks.cancel(found) : { cancelled: false, view: found.view };
        // 2026-07-28: cooperative and idempotent, the same empty acknowledgement for an ended task.
        if (request.era === "2026") {
          reply({ resultType: "complete" });
          return;
        }
        if (!outcome.cancelled) {
          sendRpcError(response, request.id, INVALID_PARAMS, `Cannot cancel task ${request.taskId}: it has already ended (${outcome.view.status})`);
          return;
        }
        reply(taskWire.task2025(outcome.view));
        return;
      }
      case "tasks/result":
        await answerResult(found.view, request.id, exchange, context);
        return;
    }
  } catch (error) {
    const failure = toAdapterError(error);
    await exchange.refuseKey(failure);
    if (!response.headersSent) sendJsonRpcError(response, failure, request.id);
    else response.end();
  }
}

/**
 * 2025-11-25's `tasks/result`: once the task has ended, the tool result tied to it. While it works,
 * the reply waits, following the task's log wherever it runs; as an SSE stream with a comment
 * every keep-alive interval when the client accepts one (proxies and clients then keep it open).
 */
async function answerResult(view: TaskView, id: RequestId, exchange: TaskExchange, context: TaskReplyContext): Promise<void> {
  const { response, signal } = exchange;
  const text = (ended: TaskView) => {
    return jsonRpcResult(id, TASKS_REVISION_2025, taskWire.result2025(ended), context.identity);
  };
  if (view.status !== "working") {
    sendText(response, text(view));
    return;
  }
  const beating: Beating | undefined = exchange.acceptsStream
    ? {
        lastWrite: performance.now(),
        beat: (now) => {
          beating!.lastWrite = now;
          response.write(": keep-alive\n\n");
        },
      }
    : undefined;
  if (beating) {
    response.statusCode = 200;
    response.setHeader("content-type", "text/event-stream");
    response.setHeader("cache-control", "no-cache");
    response.flushHeaders();
    context.sweep.add(beating);
  }
  try {
    await context.tasks.untilEnded(view.taskId, exchange.caller, signal);
    if (signal.aborted || response.destroyed) return;
    const ended = await context.tasks.find(view.taskId, exchange.caller);
    const body = ended ? text(ended.view) : errorText(id, INVALID_PARAMS, `Task not found: ${view.taskId}`);
    if (beating) response.end(`event: message\ndata: ${body}\n\n`);
    else sendText(response, body);
  } finally {
    if (beating) context.sweep.remove(beating);
  }
}

function sendText(response: ServerResponse, text: string): void {
  if (response.destroyed) return;
  response.statusCode = 200;
  response.setHeader("content-type", "application/json");
  endWithText(response, text);
}

function errorText(id: RequestId, code: number, message: string, data?: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: "2.0", id, error: { code, message, ...(data ? { data } : {}) } });
}

type ErrorData = Record<string, unknown>;

function sendRpcError(response: ServerResponse, id: RequestId, code: number, message: string, data?: ErrorData): void {
  sendText(response, errorText(id, code, message, data));
}

