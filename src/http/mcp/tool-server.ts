import {
  type CallToolResult,
  isSpecType,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  Server,
  type ServerCapabilities,
  type Tool,
} from "@modelcontextprotocol/server";
import type { z } from "zod";
import { ANSWER_CARD_URI, cardContents, cardListing } from "../../dialects/mcp/answer-card.js";
import { toolError } from "../../dialects/mcp/encode-tool-result.js";
import { TASKS_CAPABILITY_2025, TASKS_EXTENSION } from "../../dialects/mcp/task-wire.js";
import { type BoundToolCall, bindArguments, type ListedTool, TOOL_NAMES, toolNamed } from "../../dialects/mcp/tool-definitions.js";
import type { ProgressParams } from "../../dialects/mcp/tool-progress.js";
import { toValidationIssues } from "../validation-issues.js";

/** One tool call, its arguments valid and bound: what the edge's runner needs to answer it. */
export interface ToolCall extends BoundToolCall {
  /** The request's `_meta.progressToken`: progress is reported only when there is one. */
  progressToken: string | number | undefined;
  /** Aborted when the client cancels the call or the exchange ends. */
  signal: AbortSignal;
  /** Sends a `notifications/progress` on the call's response stream. */
  notify(params: ProgressParams): Promise<void>;
}

/** Answers one valid tool call; never throws (a failure is a tool result with `isError`). */
export type ToolRunner = (call: ToolCall) => Promise<CallToolResult>;

/** What the per-request MCP server is built from. */
export interface ToolServerOptions {
  version: string;
  instructions: string;
  /** The protocol revision the client speaks (its `MCP-Protocol-Version`), when it said. */
  revision: string | undefined;
  /** The tools as `tools/list` lists them for this request (`checkedTools`: with the answer card linked, or not). */
  tools: readonly Tool[];
  /** The answer card's HTML, when this request's server serves it as a resource (docs/mcp.md#the-answer-card). */
  card: string | null;
  /** Whether `reason` and `build` may run as tasks (docs/mcp.md#long-answers-as-tasks): the capability each revision reads. */
  tasks: boolean;
  run: ToolRunner;
}

/** Who the server says it is (`initialize`'s `serverInfo`; on 2026-07-28 every result's `_meta`). */
export function serverIdentity(version: string): { name: string; title: string; version: string } {
  return { name: "workspace-openai-adapter", title: "Workspace", version };
}

/**
 * The first revision whose tool errors include invalid arguments (SEP-1303: the model sees the
 * message and can correct itself); before it, invalid arguments are a JSON-RPC invalid-params error.
 */
const ARGUMENT_ERRORS_AS_TOOL_ERRORS = "2025-11-25";

/** The revision whose cacheable results carry `ttlMs` and `cacheScope`. */
const CACHE_FIELDS_REVISION = "2026-07-28";
/** How long a host may keep the card's listing and HTML (its URI is versioned; a new adapter may still fix it within a version). */
const CARD_TTL_MS = 3_600_000;

/**
 * The tools as MCP's own `Tool` schema reads them: checked once, when the adapter starts (a
 * listing that does not fit is a bug here, not a client's problem).
 */
export function checkedTools(listed: readonly ListedTool[]): Tool[] {
  return listed.map((tool) => {
    const { name } = tool;
    if (!isSpecType.Tool(tool)) throw new Error(`The tool '${name}' does not fit MCP's Tool schema`);
    return tool;
  });
}

/**
 * The MCP server of one request (docs/architecture.md#mcp-tools), on the SDK's low-level `Server`:
 * `tools/list` lists the workspace's tools; `tools/call` checks the name (an unknown tool is an
 * invalid-params error) and binds the arguments to the tool (its zod schema), then hands the call
 * to the runner: this handler is where a tool call starts and ends. With the answer card, the
 * resources: the card's listing and HTML, no templates.
 */
export function createToolServer(options: ToolServerOptions): Server {
  const capabilities: ServerCapabilities = {
    tools: {},
    ...(options.card === null ? {} : { resources: {} }),
    // 2025-11-25 reads `tasks`, 2026-07-28 the extension (each revision's codec drops the other's).
    ...(options.tasks ? { tasks: TASKS_CAPABILITY_2025, extensions: { [TASKS_EXTENSION]: {} } } : {}),
  };
  const server = new Server(serverIdentity(options.version), { capabilities, instructions: options.instructions });
  server.setRequestHandler("tools/list", () => ({ tools: [...options.tools] }));
  server.setRequestHandler("tools/call", async (request, context) => {
    const { name } = request.params;
    const tool = toolNamed(name);
    if (!tool) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool '${name}': the tools are ${TOOL_NAMES.join(", ")}`);
    }
    const bound = bindArguments(tool, request.params.arguments ?? {}, true);
    if ("error" in bound) {
      const rejected = invalidArguments(name, bound.error);
      if (argumentErrorsAreToolErrors(options.revision)) return toolError(rejected.message);
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, rejected.message, { detail: rejected.issues });
    }
    const listed = options.tools.find((candidate) => candidate.name === name);
    const result = await options.run({
      ...bound.call,
      progressToken: context.mcpReq._meta?.progressToken,
      signal: context.mcpReq.signal,
      notify: (params) => context.mcpReq.notify({ method: "notifications/progress", params: { ...params } }),
    });
    return server.projectCallToolResult(result, listed?.outputSchema);
  });
  const { card } = options;
  if (card !== null) {
    const cache = options.revision === CACHE_FIELDS_REVISION ? { ttlMs: CARD_TTL_MS, cacheScope: "public" as const } : {};
    server.setRequestHandler("resources/list", () => ({ resources: [cardListing()], ...cache }));
    server.setRequestHandler("resources/templates/list", () => ({ resourceTemplates: [], ...cache }));
    server.setRequestHandler("resources/read", (request) => {
      // SEP-2164: an unknown resource is invalid params naming its URI, never an empty `contents`.
      if (request.params.uri !== ANSWER_CARD_URI) throw new ResourceNotFoundError(request.params.uri);
      return { contents: [cardContents(card)], ...cache };
    });
  }
  return server;
}

/** Whether a client of this revision gets invalid arguments as a tool error rather than a protocol error. */
export function argumentErrorsAreToolErrors(revision: string | undefined): boolean {
  return revision !== undefined && revision >= ARGUMENT_ERRORS_AS_TOOL_ERRORS;
}

/** The message and the interface's issue list (`loc` from `arguments`) of arguments that do not fit a tool. */
function invalidArguments(name: string, error: z.ZodError) {
  const issues = toValidationIssues(error.issues, "body").map((issue) => ({ ...issue, loc: ["arguments", ...issue.loc.slice(1)] }));
  const parts = issues.map((issue) => `${issue.loc.slice(1).join(".") || "arguments"}: ${issue.msg}`);
  return { message: `Invalid arguments for tool '${name}': ${parts.join("; ")}`, issues };
}
