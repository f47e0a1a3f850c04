import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { type Admitted, admit, type IdentifiedToolRequest, identifyToolRequest } from "../admission.js";
import { type AnswerRouteOptions, answerHandler, readToolRequestBody } from "../answer-request.js";
import { type SourceLinker, sourceLinker } from "../../answer/source-links.js";
import type { Config } from "../../config/config.js";
import type { DocumentReader } from "../../core/document-reader.js";
import type { Mode } from "../../core/modes.js";
import { AnswerToolEncoder, searchResult, toolError } from "../../dialects/mcp/encode-tool-result.js";
import { type AnswerToolInput, instructionsFor, listedTools, workspaceCall } from "../../dialects/mcp/tool-definitions.js";
import { type AdapterError, ClientClosedError, toAdapterError } from "../../errors/adapter-error.js";
import { AnswerRunner, collect, type UsageMeter } from "../answer-runner.js";
import { fetchTool } from "../mcp/fetch-tool.js";
import { progressSink } from "../mcp/progress-sink.js";
import { mcpOperation } from "./answer-operations.js";
import { sendJsonRpcError } from "../error-response.js";
import type { McpEndpoint, McpExchange } from "../mcp/mcp-endpoint.js";
import type { ToolCall } from "../mcp/tool-server.js";
import { abortWhenClientLeaves } from "../request-body.js";
import type { Route } from "../route-table.js";

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
    ([{ McpEndpoint }, { createToolServer, serverIdentity }]) =>
      new McpEndpoint<ToolExchange>({
        identity: serverIdentity(options.version),
        keepAliveMs: config.sseKeepAliveMs,
        logger: options.logger,
        // A plain tool call the endpoint answers itself: no progress token, so nothing to notify.
        runDirect: (exchange, { tool, arguments: args }) => {
          const { signal } = exchange.controller;
          return runTool({ tool, arguments: args, progressToken: undefined, signal, notify: async () => undefined }, exchange);
        },
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
    facts.of(response).inWorkspace(identified.workspace);
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
    facts.of(exchange.response).callingTool(call.tool.name);
    if (call.tool.name === "fetch") return fetchTool((call.arguments as { id: string }).id, exchange.workspace, exchange.links, options.documents);
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
      const plan = { prompt: input.question, mode, choices: 1, continueQueryId: input.query_id ?? null };
      const trace = { operation: "execute_tool", tool: call.tool.name, model: mode, stream: false } as const;
      const order = { response, identity, workspace, meter: admission, input: plan, trace, controller };
      const progress = call.progressToken === undefined ? undefined : progressSink(call, call.progressToken, mode, sweep);
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

  const handler = { fast: answerHandler(handle, options) };
  return [
    { method: "POST", path: "/mcp", handler, operation: mcpOperation(false, tools) },
    { method: "POST", path: "/mcp/{workspace}", handler, operation: mcpOperation(true, tools) },
  ];
}
