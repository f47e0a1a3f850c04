import { type CallToolResult, ProtocolError, ProtocolErrorCode, Server, type Tool } from "@modelcontextprotocol/server";
import type { z } from "zod";
import { toolError } from "../../dialects/mcp/encode-tool-result.js";
import { type ListedTool, TOOL_NAMES, type ToolDefinition, toolNamed } from "../../dialects/mcp/tool-definitions.js";
import type { ProgressParams } from "../../dialects/mcp/tool-progress.js";
import { toValidationIssues } from "../validation-issues.js";

/** One tool call, its arguments valid: what the route's runner needs to answer it. */
export interface ToolCall {
  tool: ToolDefinition;
  arguments: unknown;
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
  tools: readonly ListedTool[];
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

/**
 * The MCP server of one request (docs/architecture.md#mcp-tools), on the SDK's low-level `Server`:
 * `tools/list` lists the workspace's tools; `tools/call` checks the name (an unknown tool is an
 * invalid-params error) and the arguments (against the tool's zod schema), then hands the call
 * to the runner. This handler is where a tool call starts and ends.
 */
export function createToolServer(options: ToolServerOptions): Server {
  const server = new Server(
    serverIdentity(options.version),
    { capabilities: { tools: {} }, instructions: options.instructions },
  );
  server.setRequestHandler("tools/list", () => ({ tools: options.tools as unknown as Tool[] }));
  server.setRequestHandler("tools/call", async (request, context) => {
    const { name } = request.params;
    const tool = toolNamed(name);
    if (!tool) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool '${name}': the tools are ${TOOL_NAMES.join(", ")}`);
    }
    const parsed = tool.input.safeParse(request.params.arguments ?? {}, { reportInput: true });
    if (!parsed.success) {
      const rejected = invalidArguments(name, parsed.error);
      if (argumentErrorsAreToolErrors(options.revision)) return toolError(rejected.message);
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, rejected.message, { detail: rejected.issues });
    }
    const progressToken = context.mcpReq._meta?.progressToken;
    const listed = options.tools.find((candidate) => candidate.name === name);
    const result = await options.run({
      tool,
      arguments: parsed.data,
      progressToken,
      signal: context.mcpReq.signal,
      notify: (params) => context.mcpReq.notify({ method: "notifications/progress", params: { ...params } }),
    });
    return server.projectCallToolResult(result, listed?.outputSchema);
  });
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
