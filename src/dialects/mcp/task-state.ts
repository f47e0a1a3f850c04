import type { CallToolResult } from "@modelcontextprotocol/server";
import { z } from "zod";
import { MODES } from "../../core/modes.js";
import type { SseFrame } from "../../core/sse-frame.js";

/** An MCP task's id (docs/mcp.md#long-answers-as-tasks): `task_` and 48 hex digits, 192 random bits, the background record's id. */
export const TASK_ID = /^task_[0-9a-f]{48}$/;

/** What a task's background record keeps as its object: its times and settings, then how it ended. Read back through this schema. */
export const taskStateSchema = z.looseObject({
  status: z.enum(["working", "completed", "failed", "cancelled"]),
  /** ISO 8601. */
  createdAt: z.string(),
  lastUpdatedAt: z.string().optional(),
  ttlMs: z.int(),
  pollIntervalMs: z.int(),
  statusMessage: z.string().optional(),
  /** The tool result, once the answer ended (completed; or failed as a tool error, what `tools/call` would have returned). */
  result: z.looseObject({ content: z.array(z.unknown()) }).optional(),
  /** Why it failed: a tool error's text, or a takeover that was refused (then without `result`). */
  error: z.looseObject({ message: z.string() }).optional(),
});
/** A task's object in its background record. */
export type TaskState = z.infer<typeof taskStateSchema>;

/** What a task's record keeps for a replica that takes it over (`runner.resume` parses it): the query's mode and prompt, the card, the task's head. */
export const taskResumeSchema = z.object({
  mode: z.enum(MODES),
  prompt: z.string(),
  /** Its workspace (its sources' links are made for it). */
  workspace: z.string(),
  /** The workspace its sources' `fetch` ids name, when the host showed the answer card; else null. */
  cardWorkspace: z.string().nullable(),
  createdAt: z.string(),
  ttlMs: z.int(),
  pollIntervalMs: z.int(),
});
/** A task's state for a takeover. */
export type TaskResume = z.infer<typeof taskResumeSchema>;

/** A frame of a task's event log as read back: a step (its text), or an end. */
const taskFrameSchema = z.looseObject({
  type: z.string(),
  at: z.string().optional(),
  steps: z.array(z.string()).optional(),
  text: z.string().optional(),
});

/** A task as a client is told of it, whatever its revision: derived from its record and its log (`taskView`). */
export interface TaskView {
  taskId: string;
  status: TaskState["status"];
  statusMessage: string | undefined;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  pollIntervalMs: number;
  result: CallToolResult | undefined;
  /** A failure that is no tool result (a takeover refused): 2026-07-28's `failed` with a JSON-RPC error. */
  error: string | undefined;
}

/** What a task's log says of it: its steps (and as reasoning text), the latest, and when it last changed. */
export interface TaskProgress {
  steps: string[];
  reasoning: string;
  lastStep: string | undefined;
  at: string | undefined;
}

/** The steps and time a task's log has reached: its latest step is its `statusMessage` while it works. */
export function progressOf(frames: readonly SseFrame[]): TaskProgress {
  const steps: string[] = [];
  let reasoning = "";
  let at: string | undefined;
  for (const frame of frames) {
    const data = taskFrameSchema.safeParse(frame.data);
    if (!data.success) continue;
    if (data.data.at !== undefined) at = data.data.at;
    if (data.data.type !== "task.step") continue;
    steps.push(...(data.data.steps ?? []));
    reasoning += data.data.text ?? "";
  }
  return { steps, reasoning, lastStep: steps.at(-1), at };
}

/** A task as its client sees it: its record's object (parsed; null when it does not parse) and the latest step of its log. */
export function taskView(taskId: string, state: unknown, frames: readonly SseFrame[]): TaskView | null {
  const parsed = taskStateSchema.safeParse(state);
  if (!parsed.success) return null;
  const task = parsed.data;
  const progress = progressOf(frames);
  const times = [task.lastUpdatedAt, progress.at, task.createdAt].filter((at): at is string => at !== undefined);
  const lastUpdatedAt = times.sort().at(-1) ?? task.createdAt;
  const result = task.result as CallToolResult | undefined;
  const failure = task.error?.message;
  const statusMessage = task.statusMessage ?? (task.status === "failed" ? failure : progress.lastStep);
  return {
    taskId,
    status: task.status,
    statusMessage,
    createdAt: task.createdAt,
    lastUpdatedAt,
    ttlMs: task.ttlMs,
    pollIntervalMs: task.pollIntervalMs,
    result,
    error: result === undefined && task.status === "failed" ? (failure ?? "The task failed") : undefined,
  };
}

/** Whether a task's TTL has run out at `now` (ms): it is then gone, as a task that never was. */
export function expired(view: Pick<TaskView, "createdAt" | "ttlMs">, now: number): boolean {
  return Date.parse(view.createdAt) + view.ttlMs <= now;
}
