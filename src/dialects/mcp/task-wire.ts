import type { CallToolResult } from "@modelcontextprotocol/server";
import { toolError } from "./encode-tool-result.js";
import type { TaskView } from "./task-state.js";

/** The `_meta` key that ties a 2025-11-25 message to its task. */
export const RELATED_TASK = "io.modelcontextprotocol/related-task";
/** The `_meta` key of what a 2025-11-25 host may hand its model while the task runs. */
export const MODEL_IMMEDIATE_RESPONSE = "io.modelcontextprotocol/model-immediate-response";
/** The 2026-07-28 extension's id (`server/discover`, and each request's client capabilities). */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** What the 2025-11-25 `initialize` advertises: tasks for `tools/call`, cancellable (no `list`: tasks are the caller's, found by id). */
export const TASKS_CAPABILITY_2025 = { cancel: {}, requests: { tools: { call: {} } } };

/**
 * Pure encoders of a task for each revision (docs/mcp.md#long-answers-as-tasks). 2025-11-25: the
 * `Task` object, a tool error ends it `failed` (its text the `statusMessage`); 2026-07-28 (the
 * extension): the flat created task and the `DetailedTask` with its result inline, a tool error
 * `completed` with `result.isError`, `failed` only for a failure that is no tool result.
 */
export const taskWire = {
  /** 2025-11-25's `Task` (`tasks/get`, `tasks/cancel`, the created task). */
  task2025(view: TaskView): Record<string, unknown> {
    const failed = view.status === "failed" || (view.status === "completed" && view.result?.isError === true);
    const statusMessage = failed ? (errorText(view) ?? view.statusMessage) : view.statusMessage;
    return {
      taskId: view.taskId,
      status: failed ? "failed" : view.status,
      ...(statusMessage ? { statusMessage } : {}),
      createdAt: view.createdAt,
      lastUpdatedAt: view.lastUpdatedAt,
      ttl: view.ttlMs,
      pollInterval: view.pollIntervalMs,
    };
  },

  /** 2025-11-25's `tools/call` answer when it asked for a task. */
  created2025(view: TaskView): Record<string, unknown> {
    const note = `The workspace is answering in the background (task ${view.taskId}); the answer follows when it is ready.`;
    return { task: taskWire.task2025(view), _meta: { [MODEL_IMMEDIATE_RESPONSE]: note } };
  },

  /** 2025-11-25's `tasks/result` of an ended task: exactly what `tools/call` would have returned, tied to its task. */
  result2025(view: TaskView): CallToolResult {
    const result = view.result ?? toolError(view.status === "cancelled" ? "The task was cancelled before it ended" : (view.error ?? "The task failed"));
    return { ...result, _meta: { ...(result._meta ?? {}), [RELATED_TASK]: { taskId: view.taskId } } };
  },

  /** 2026-07-28's flat `tools/call` answer for a task. */
  created2026(view: TaskView): Record<string, unknown> {
    return { resultType: "task", ...head2026(view), status: view.status };
  },

  /** 2026-07-28's `tasks/get`: the `DetailedTask`, its result or error inline. */
  detailed2026(view: TaskView): Record<string, unknown> {
    const base = { resultType: "complete", ...head2026(view) };
    if (view.status === "working" || view.status === "cancelled") return { ...base, status: view.status };
    // The result as `tools/call` would have given it on this revision: stamped complete.
    if (view.result !== undefined) return { ...base, status: "completed", result: { ...view.result, resultType: "complete" } };
    return { ...base, status: "failed", error: { code: -32603, message: view.error ?? "The task failed" } };
  },
};

function head2026(view: TaskView): Record<string, unknown> {
  return {
    taskId: view.taskId,
    ...(view.statusMessage ? { statusMessage: view.statusMessage } : {}),
    createdAt: view.createdAt,
    lastUpdatedAt: view.lastUpdatedAt,
    ttlMs: view.ttlMs,
    pollIntervalMs: view.pollIntervalMs,
  };
}

/** A tool error's text, or a failure's message. */
function errorText(view: TaskView): string | undefined {
  const first = view.result?.content[0];
  if (view.result?.isError === true && first?.type === "text") return first.text;
  return view.error;
}
