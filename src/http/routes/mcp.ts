import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { type Admitted, admit, type IdentifiedToolRequest, identifyToolRequest } from "../admission.js";
import { type AnswerRouteOptions, answerHandler, readToolRequestBody } from "../answer-request.js";
import { type SourceLinker, sourceLinker } from "../../answer/source-links.js";
import type { Config } from "../../config/config.js";
import type { DocumentReader } from "../../core/document-reader.js";
import type { Mode } from "../../core/modes.js";
import { AnswerToolEncoder, fetchResult, searchResult, toolError } from "../../dialects/mcp/encode-tool-result.js";
import { readSourceId } from "../../dialects/mcp/source-ids.js";
import { type AnswerToolInput, listedTools, TOOL_NAMES, TOOLS } from "../../dialects/mcp/tool-definitions.js";
import { ToolProgress } from "../../dialects/mcp/tool-progress.js";
import { type AdapterError, ClientClosedError, toAdapterError } from "../../errors/adapter-error.js";
import { AnswerRunner, collect, type ProgressSink, type UsageMeter } from "../answer-runner.js";
import { sendJsonRpcError } from "../error-response.js";
import type { McpEndpoint, McpExchange } from "../mcp/mcp-endpoint.js";
import type { ToolCall } from "../mcp/tool-server.js";
import { errorResponse, workspaceHeader } from "../openapi.js";
import { abortWhenClientLeaves } from "../request-body.js";
import type { Route } from "../route-table.js";
import type { Beating } from "../sse-writer.js";

/** What the MCP route needs. */
export interface McpRouteOptions extends AnswerRouteOptions {
  config: Pick<Config, "bodyLimitBytes" | "maxJsonDepth" | "defaultWorkspace" | "corsOrigins" | "publicUrl" | "modeField" | "sseKeepAliveMs" | "sourceUrlTemplate">;
  /** The package version, for `serverInfo`. */
  version: string;
  /** The base URL of the adapter's document page, when it serves one (the embedded workspace). */
  documentPage?: (() => string) | undefined;
  /** The documents `fetch` returns whole (the embedded workspace's); without it, `fetch` returns the cited passage. */
  documents?: DocumentReader | undefined;
}

/** One MCP request past the edge: the exchange the SDK serves, and who asks in which workspace. */
interface ToolExchange extends McpExchange, IdentifiedToolRequest {
  response: ServerResponse;
  links: SourceLinker;
  /** The meter of a tool call that asks the workspace (docs/rate-limits.md). */
  admission: UsageMeter;
}

/**
 * The remote MCP server (docs/architecture.md#mcp-tools): `POST /mcp` and `POST /mcp/{workspace}`,
 * Streamable HTTP, stateless. The edge is the answer routes' (origin, authentication, workspace,
 * concurrency caps, body limits); the tools run on the same answer core; their results are the
 * MCP dialect's encoding of the answer events.
 */
export function mcpRoutes(options: McpRouteOptions): Route[] {
  const { config, facts } = options;
  const runner = new AnswerRunner({ ...options, modeField: config.modeField, newQueryId: options.newQueryId ?? randomUUID });
  const tools = listedTools();
  // A sweep looks every quarter of its interval: a silence of 4/5 of SSE_KEEPALIVE_MS, found within
  // another 1/5, gives a waiting call a progress notification at least every SSE_KEEPALIVE_MS.
  const sweep = options.sweeps.of(Math.max(10, Math.floor((config.sseKeepAliveMs * 4) / 5)));
  const linkSettings = { template: config.sourceUrlTemplate, documentPage: options.documentPage };
  // The SDK is loaded only where MCP is on (MCP=off costs nothing): here, while the adapter starts.
  const endpoint: Promise<McpEndpoint<ToolExchange>> = Promise.all([import("../mcp/mcp-endpoint.js"), import("../mcp/tool-server.js")]).then(
    ([{ McpEndpoint }, { createToolServer }]) =>
      new McpEndpoint<ToolExchange>({
        keepAliveMs: config.sseKeepAliveMs,
        logger: options.logger,
        serverFor: (exchange) =>
          createToolServer({
            version: options.version,
            instructions: instructionsFor(exchange.workspace),
            revision: exchange.revision,
            tools,
            run: (call) => runTool(call, exchange),
          }),
      }),
  );

  async function handle(request: IncomingMessage, response: ServerResponse, params: Record<string, string>): Promise<void> {
    const identified = identifyToolRequest(request, params.workspace, options);
    let body: unknown;
    try {
      body = await readToolRequestBody(request, config);
    } catch (error) {
      sendJsonRpcError(response, toAdapterError(error));
      return;
    }
    Object.assign(facts.of(response), { workspace: identified.workspace });
    // One admission: the caps for every request (over them a plain 429), and the key's rate limits
    // for a call of a tool that asks the workspace, before the SDK sees it: over a limit a 429 (with
    // retry-after) and a JSON-RPC error naming the call, and no upstream call.
    const call = workspaceCall(body);
    const admitting = admit(response, identified.identity.principal, identified.workspace, call !== undefined, options);
    let admission: Admitted;
    try {
      admission = admitting instanceof Promise ? await admitting : admitting;
    } catch (error) {
      sendJsonRpcError(response, toAdapterError(error), call?.id);
      return;
    }
    const revision = request.headers["mcp-protocol-version"];
    const exchange: ToolExchange = {
      ...identified,
      principal: identified.identity.principal,
      revision: typeof revision === "string" ? revision : undefined,
      controller: abortWhenClientLeaves(response, facts),
      response,
      links: sourceLinker(linkSettings, identified.workspace),
      admission: admission.meter,
    };
    await (await endpoint).serve(request, response, body, exchange);
  }

  /** Runs one valid tool call: where a tool call starts and ends. Never throws: a failure is a tool error. */
  async function runTool(call: ToolCall, exchange: ToolExchange): Promise<CallToolResult> {
    Object.assign(facts.of(exchange.response), { tool: call.tool.name });
    if (call.tool.name === "fetch") return fetchTool((call.arguments as { id: string }).id, exchange);
    const search = call.tool.name === "search";
    const input = search ? { question: (call.arguments as { query: string }).query } : (call.arguments as AnswerToolInput);
    const answered = await answerTool(call.tool.mode as Mode, input, call, exchange);
    if (!(answered instanceof AnswerToolEncoder)) return toolError(answered.message);
    return search ? searchResult(answered.output(), exchange.workspace) : answered.result();
  }

  /**
   * Asks the workspace and follows the answer to its end, through the answer runner (the same plan,
   * service and events as a chat completion), collected for the tool result, with progress
   * notifications (each step; a sign of life after a silence) when the call asked for them. Ends
   * early when the client leaves or cancels (the upstream wait stops with it), or at shutdown.
   */
  async function answerTool(
    mode: Mode,
    input: AnswerToolInput,
    call: ToolCall,
    exchange: ToolExchange,
  ): Promise<AnswerToolEncoder | AdapterError> {
    const controller = new AbortController();
    const stop = () => controller.abort();
    call.signal.addEventListener("abort", stop, { once: true });
    exchange.controller.signal.addEventListener("abort", stop, { once: true });
    let shutdown: AdapterError | undefined;
    const untrack = options.lifecycle.trackStream({
      fail: async (error) => {
        shutdown = error;
        controller.abort();
      },
    });
    try {
      const { identity, workspace, admission, response } = exchange;
      const order = {
        response,
        identity,
        workspace,
        meter: admission,
        input: { prompt: input.question, mode, choices: 1, continueQueryId: input.query_id ?? null },
        trace: { operation: "execute_tool", tool: call.tool.name, model: mode, stream: false } as const,
        controller,
      };
      const progress = call.progressToken === undefined ? undefined : progressOf(call, call.progressToken, mode);
      const delivery = collect(new AnswerToolEncoder(mode, exchange.links), { progress, shutdown: () => shutdown });
      return await runner.run(order, () => ({ delivery }));
    } catch (error) {
      const failure = shutdown ?? toAdapterError(error);
      if (failure.status >= 500 && !(failure instanceof ClientClosedError)) options.logger.warn({ err: { message: failure.message } }, "tool call failed");
      return failure;
    } finally {
      untrack();
      call.signal.removeEventListener("abort", stop);
      exchange.controller.signal.removeEventListener("abort", stop);
    }
  }

  /** The progress notifications of a call that asked for them: the query started, each step, a sign of life after a silence. */
  function progressOf(call: ToolCall, token: string | number, mode: Mode): ProgressSink {
    const progress = new ToolProgress(token);
    const started = performance.now();
    const waiting: Beating = {
      lastWrite: started,
      beat: (now) => {
        waiting.lastWrite = now;
        void call.notify(progress.waiting(now - started)).catch(() => undefined);
      },
    };
    return {
      started: async (queryId) => {
        await call.notify(progress.started(queryId, mode)).catch(() => undefined);
        waiting.lastWrite = performance.now();
        sweep.add(waiting);
      },
      event: async (event) => {
        for (const params of progress.of(event)) {
          waiting.lastWrite = performance.now();
          await call.notify(params).catch(() => undefined);
        }
      },
      done: () => sweep.remove(waiting),
    };
  }

  /** `fetch`: what the adapter knows of a source `search` returned (docs/architecture.md#mcp-tools). */
  async function fetchTool(id: string, exchange: ToolExchange): Promise<CallToolResult> {
    const reference = readSourceId(id);
    if (!reference) return toolError(`'${id}' is not an id that search returned: call search, then fetch one of its results' ids`);
    if (reference.workspace !== exchange.workspace) {
      return toolError(`The result '${id}' comes from workspace '${reference.workspace}', not '${exchange.workspace}': search this workspace first`);
    }
    let document = null;
    if (options.documents && reference.filename) {
      document = await options.documents(reference.filename).catch(() => null);
      if (!document) return toolError(`No document '${reference.filename}' in workspace '${exchange.workspace}'`);
    }
    return fetchResult(id, reference, document, exchange.links(reference).url);
  }

  const handler = { fast: answerHandler(handle, options) };
  const operation = (summary: string, parameters: unknown[]) => ({
    summary,
    description: `Streamable HTTP (stateless; JSON-RPC 2.0 in, JSON or server-sent events out) for MCP protocol revisions 2025-06-18, 2025-11-25 and 2026-07-28. Tools: ${TOOL_NAMES.join(", ")} (listed with their schemas under \`x-mcp-tools\`). A failed query, a deadline or an upstream fault is a tool result with \`isError: true\`; an unknown tool, a malformed or oversized body are JSON-RPC errors.`,
    security: [{ bearer: [] }],
    parameters: [
      workspaceHeader,
      ...parameters,
      { name: "MCP-Protocol-Version", in: "header", required: false, schema: { type: "string" }, description: "The revision the client speaks (every request after `initialize`; every request in 2026-07-28)" },
    ],
    requestBody: { required: true, content: { "application/json": { schema: { type: "object", description: "One JSON-RPC 2.0 message of the Model Context Protocol" } } } },
    responses: {
      "200": {
        description: "The JSON-RPC response, as JSON or (when progress is sent first) an SSE stream ending with it",
        content: { "application/json": { schema: { type: "object" } }, "text/event-stream": { schema: { type: "string" } } },
      },
      "202": { description: "A notification, accepted" },
      "400": { description: "A JSON-RPC error: the body is not JSON (-32700), not a JSON-RPC message, or nested too deep (-32600), or the revision is not served" },
      "401": errorResponse("No bearer credential, or one the deployment does not accept (with `WWW-Authenticate: Bearer`)"),
      "403": errorResponse("A browser `Origin` that `CORS_ORIGINS` does not list"),
      "405": errorResponse("GET or DELETE: the endpoint is stateless (no standalone stream, no session to end)"),
      "413": { description: "A JSON-RPC error (-32600): the body is larger than the limit" },
      "415": { description: "A JSON-RPC error (-32600): the body is not declared as JSON" },
      "422": errorResponse("No workspace: neither a `Service-Workspace` header, nor `/mcp/{workspace}`, nor a default"),
      "429": errorResponse("Too many requests in flight here; or a tool call that starts an answer over the key's rate limits (`retry-after`, and a JSON-RPC error naming the call)"),
    },
    "x-mcp-tools": tools,
  });
  return [
    { method: "POST", path: "/mcp", handler, operation: operation("The workspace as a remote MCP server (tools)", []) },
    {
      method: "POST",
      path: "/mcp/{workspace}",
      handler,
      operation: operation("The same MCP server, for one workspace named in the path (for clients that can set only a URL and one header)", [
        { name: "workspace", in: "path", required: true, schema: { type: "string" }, description: "Workspace id (the `Service-Workspace` header wins when both are sent)" },
      ]),
    },
  ];
}

/** A `tools/call` (with an id: not a notification) of a tool that asks the workspace (its definition has a `mode`), or undefined. */
function workspaceCall(body: unknown): { id: string | number } | undefined {
  const message = body as { method?: unknown; id?: unknown; params?: { name?: unknown } } | null;
  if (typeof message !== "object" || message === null || message.method !== "tools/call") return undefined;
  const { name } = message.params ?? {};
  const tool = TOOLS.find((definition) => definition.name === name);
  if (!tool || tool.mode === null) return undefined;
  return typeof message.id === "string" || typeof message.id === "number" ? { id: message.id } : undefined;
}

/** What `initialize` (or `server/discover`) tells the client about the tools, for its model. */
function instructionsFor(workspace: string): string {
  return (
    `Tools over the documents of workspace '${workspace}' (a Workspace Knowledge Service). ` +
    "ask: a short grounded answer; reason: a thorough one (slower); build: a document. Each answer cites numbered sources " +
    "and gives a query_id to continue with. search and fetch follow OpenAI's connector convention."
  );
}
