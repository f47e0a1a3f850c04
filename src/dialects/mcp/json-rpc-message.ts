import { z } from "zod";

/** A JSON-RPC request id as MCP allows it (a string or a number; never null). */
const requestIdSchema = z.union([z.string(), z.number()]);
/** A request's `_meta`: its keys are read where they matter (`progressTokenOf`, `declaresAnswerCard`). */
const metaSchema = z.record(z.string(), z.unknown());

/**
 * The messages the MCP edge tells apart (docs/architecture/mcp.md#mcp-tools). Loose, as schemas of
 * what comes from outside are here: only what the edge decides on is checked, every other key
 * kept, and anything unsure left to the SDK, which answers each malformed message with its error.
 */
const toolCallSchema = z.looseObject({
  jsonrpc: z.unknown().optional(),
  id: requestIdSchema,
  method: z.literal("tools/call"),
  params: z.looseObject({ name: z.string(), arguments: z.unknown().optional(), _meta: metaSchema.optional() }),
});
/** The methods of MCP tasks (docs/mcp.md#long-answers-as-tasks): each names its task by `params.taskId`. */
export const TASK_METHODS = ["tasks/get", "tasks/result", "tasks/cancel", "tasks/update"] as const;
/** One of the task methods. */
export type TaskMethod = (typeof TASK_METHODS)[number];
const taskRequestSchema = z.looseObject({
  id: requestIdSchema,
  method: z.enum(TASK_METHODS),
  params: z.looseObject({ taskId: z.string(), _meta: metaSchema.optional().catch(undefined) }),
});
/** A 2025-11-25 `tools/call`'s `params.task`: it asks for a task, for `ttl` milliseconds if it says. */
const taskAskSchema = z.looseObject({ ttl: z.int().positive().optional().catch(undefined) });
const cancellationSchema = z.looseObject({
  // A notification has no id: a `notifications/cancelled` with one is not a cancellation.
  id: z.never().optional(),
  method: z.literal("notifications/cancelled"),
  params: z.looseObject({ requestId: requestIdSchema }),
});
const initializeSchema = z.looseObject({ method: z.literal("initialize") });
const messageSchema = z.discriminatedUnion("method", [toolCallSchema, cancellationSchema, initializeSchema, taskRequestSchema]);
/** Any other single message, for the `_meta` it carries (a 2026-07-28 request's client capabilities). */
const otherSchema = z.looseObject({
  method: z.string(),
  params: z.looseObject({ _meta: metaSchema.optional().catch(undefined) }).optional().catch(undefined),
});

/** A `tools/call` request as it came (every key kept): what the task path checks further. */
export type ToolCallRequest = z.output<typeof toolCallSchema>;

/** One POST's body as the MCP edge reads it: admission, cancellation, `initialize` and the task path all decide on it. */
export type JsonRpcMessage =
  | {
      kind: "tool-call";
      id: string | number;
      /** The tool it names (known or not). */
      name: string;
      /** `_meta.progressToken`, when the call asked for progress. */
      progressToken: string | number | undefined;
      meta: Record<string, unknown> | undefined;
      /** `params.task` (2025-11-25): the call asks to run as a task; `false` when it does not, `null` when what it sent is no task object. */
      task: { ttl?: number | undefined } | false | null;
      request: ToolCallRequest;
    }
  | { kind: "task"; id: string | number; method: TaskMethod; taskId: string; meta: Record<string, unknown> | undefined }
  | { kind: "cancellation"; requestId: string | number; meta: undefined }
  | { kind: "initialize"; meta: undefined }
  /** A batch, another method, or a message the schemas above do not fit (the SDK answers it). */
  | { kind: "other"; method: string | undefined; meta: Record<string, unknown> | undefined };

/**
 * Reads one MCP POST body (docs/architecture/mcp.md#mcp-tools): the one reader behind the edge's
 * decisions, so that none of them casts the body or reads it its own way.
 */
export function readJsonRpc(body: unknown): JsonRpcMessage {
  const known = messageSchema.safeParse(body);
  if (known.success) {
    const message = known.data;
    if (message.method === "tools/call") {
      const meta = message.params._meta;
      const { name } = message.params;
      const ask = message.params.task;
      const task = ask === undefined ? false : (taskAskSchema.safeParse(ask).data ?? null);
      return { kind: "tool-call", id: message.id, name, progressToken: progressTokenOf(meta), meta, task, request: message };
    }
    if (message.method === "initialize") return { kind: "initialize", meta: undefined };
    if (message.method !== "notifications/cancelled") {
      return { kind: "task", id: message.id, method: message.method, taskId: message.params.taskId, meta: message.params._meta };
    }
    return { kind: "cancellation", requestId: message.params.requestId, meta: undefined };
  }
  const other = otherSchema.safeParse(body);
  if (!other.success) return { kind: "other", method: undefined, meta: undefined };
  return { kind: "other", method: other.data.method, meta: other.data.params?._meta };
}

/** A request's progress token, when it carries a valid one. */
function progressTokenOf(meta: Record<string, unknown> | undefined): string | number | undefined {
  const token = meta?.progressToken;
  return typeof token === "string" || typeof token === "number" ? token : undefined;
}
