import type { IncomingHttpHeaders } from "node:http";
import { CLIENT_CAPABILITIES_META_KEY, classifyInboundRequest } from "@modelcontextprotocol/server";
import type { JsonRpcMessage, TaskMethod } from "../../dialects/mcp/json-rpc-message.js";
import { TASKS_EXTENSION } from "../../dialects/mcp/task-wire.js";
import { type BoundToolCall, bindArguments, toolNamed } from "../../dialects/mcp/tool-definitions.js";

/** The revision of the core tasks (`capabilities.tasks`, `params.task`, the blocking `tasks/result`). */
export const TASKS_REVISION_2025 = "2025-11-25";
/** The revision of the tasks extension (`io.modelcontextprotocol/tasks`, declared per request). */
export const TASKS_REVISION_2026 = "2026-07-28";

/** Which revision's tasks a request speaks. */
export type TaskEra = "2025" | "2026";

/**
 * A request the MCP endpoint answers as tasks (docs/mcp.md#long-answers-as-tasks): a call that runs
 * as a task, a task method, or a refusal the specification names; the endpoint writes its bytes.
 */
export type TaskRequest =
  | { kind: "create"; id: string | number; era: TaskEra; call: BoundToolCall; ttlMs: number | undefined }
  | { kind: "method"; id: string | number; era: TaskEra; method: TaskMethod; taskId: string }
  | { kind: "refuse"; id: string | number; code: number; message: string; data?: Record<string, unknown> | undefined };

/**
 * Recognises a request about tasks: on 2025-11-25 a `tools/call` with `params.task` (of `reason` or
 * `build`, whose arguments fit: anything else unsure is the SDK's) and `tasks/get|result|cancel`;
 * on 2026-07-28, whose envelope the SDK's classifier finds valid and whose `Mcp-Method`/`Mcp-Name`
 * agree with the body (else the SDK answers the mismatch), a `tools/call` of `reason` or `build`
 * from a client that declares the tasks extension in that request, and `tasks/get|cancel|update`
 * (-32021 without the declaration). Anything else is `undefined`: not a task.
 */
export function taskRequest(headers: IncomingHttpHeaders, message: JsonRpcMessage, body: unknown): TaskRequest | undefined {
  const revision = headers["mcp-protocol-version"];
  if (revision === TASKS_REVISION_2025) return legacyTaskRequest(message);
  if (revision !== TASKS_REVISION_2026) return undefined;
  if (message.kind === "tool-call") {
    if (!declaresTasks(message.meta) || !taskSupported(message.name) || !validEnvelope(headers, body, "tools/call", message.name)) return undefined;
    const call = boundCall(message.name, message.request.params.arguments);
    return call ? { kind: "create", id: message.id, era: "2026", call, ttlMs: undefined } : undefined;
  }
  if (message.kind !== "task" || message.method === "tasks/result") return undefined;
  if (!validEnvelope(headers, body, message.method, message.taskId)) return undefined;
  if (!declaresTasks(message.meta)) {
    const requiredCapabilities = { extensions: { [TASKS_EXTENSION]: {} } };
    return { kind: "refuse", id: message.id, code: -32021, message: `${message.method} needs the ${TASKS_EXTENSION} extension`, data: { requiredCapabilities } };
  }
  return { kind: "method", id: message.id, era: "2026", method: message.method, taskId: message.taskId };
}

function legacyTaskRequest(message: JsonRpcMessage): TaskRequest | undefined {
  if (message.kind === "task") {
    if (message.method === "tasks/update") return undefined;
    return { kind: "method", id: message.id, era: "2025", method: message.method, taskId: message.taskId };
  }
  if (message.kind !== "tool-call" || message.task === false || message.task === null) return undefined;
  const tool = toolNamed(message.name);
  if (!tool) return undefined;
  if (!taskSupported(tool.name)) {
    return { kind: "refuse", id: message.id, code: -32601, message: `The tool '${tool.name}' does not run as a task (only reason and build do)` };
  }
  const call = boundCall(message.name, message.request.params.arguments);
  return call ? { kind: "create", id: message.id, era: "2025", call, ttlMs: message.task.ttl } : undefined;
}

/** Whether a tool may run as a task (`execution.taskSupport: "optional"`): the long answers. */
function taskSupported(name: string): boolean {
  return toolNamed(name)?.asTask !== undefined;
}

function boundCall(name: string, args: unknown): BoundToolCall | undefined {
  const tool = toolNamed(name);
  if (!tool) return undefined;
  const bound = bindArguments(tool, args ?? {});
  return "error" in bound ? undefined : bound.call;
}

/** Whether a 2026-07-28 request declares the tasks extension among its client capabilities. */
export function declaresTasks(meta: Record<string, unknown> | undefined): boolean {
  const capabilities = meta?.[CLIENT_CAPABILITIES_META_KEY];
  if (typeof capabilities !== "object" || capabilities === null) return false;
  const extensions = (capabilities as { extensions?: unknown }).extensions;
  return typeof extensions === "object" && extensions !== null && TASKS_EXTENSION in extensions;
}

/** A 2026-07-28 request whose envelope the SDK's classifier accepts, its `Mcp-Method` and `Mcp-Name` those of the body. */
function validEnvelope(headers: IncomingHttpHeaders, body: unknown, method: string, name: string): boolean {
  if (headers["mcp-method"] !== method || headers["mcp-name"] !== name) return false;
  const route = classifyInboundRequest({
    httpMethod: "POST",
    protocolVersionHeader: TASKS_REVISION_2026,
    mcpMethodHeader: method,
    mcpNameHeader: name,
    body,
  });
  return route.kind === "modern" && route.messageKind === "request";
}
