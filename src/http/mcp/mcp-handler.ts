import type { IncomingMessage, ServerResponse } from "node:http";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { type Admitted, admit, type IdentifiedToolRequest, identifyToolRequest } from "../admission.js";
import { type AnswerRouteOptions, readToolRequestBody, tellLimits } from "../answer-request.js";
import { type DocumentLinkSigning, type SourceLinker, sourceLinker } from "../../answer/source-links.js";
import type { Authenticator } from "../../auth/authenticate.js";
import type { Config } from "../../config/config.js";
import type { BackgroundResponses } from "../../continuity/background/background-responses.js";
import type { DocumentReader } from "../../core/document-reader.js";
import type { Mode } from "../../core/modes.js";
import { declaresAnswerCard } from "../../dialects/mcp/answer-card.js";
import { AnswerToolEncoder } from "../../dialects/mcp/encode-tool-result.js";
import { type JsonRpcMessage, readJsonRpc, type ToolCallRequest } from "../../dialects/mcp/json-rpc-message.js";
import { type Answered, instructionsFor, type ListedTool, listedTools, type ToolContext, toolNamed } from "../../dialects/mcp/tool-definitions.js";
import type { AnswerToolInput } from "../../dialects/mcp/tool-schemas.js";
import { type AdapterError, ClientClosedError, toAdapterError } from "../../errors/adapter-error.js";
import { collect } from "../delivery/collect-delivery.js";
import type { UsageMeter } from "../delivery/delivery.js";
import { sendJsonRpcError } from "../error-response.js";
import type { RequestContext } from "../request-context.js";
import type { RouteCall } from "../route-table.js";
import { readAnswerCard } from "./answer-card-file.js";
import type { McpEndpoint, McpExchange } from "./mcp-endpoint.js";
import { McpTasks } from "./mcp-tasks.js";
import { progressSink } from "./progress-sink.js";
import { answerTaskRequest } from "./task-replies.js";
import { taskRequest } from "./task-request.js";
import type { ToolCall } from "./tool-server.js";

/** What the MCP endpoint needs. */
export interface McpRouteOptions extends AnswerRouteOptions {
  config: Pick<Config, "server" | "upstream" | "limits" | "answers" | "mcp" | "continuity">;
  /** Background answers: where tasks live (docs/mcp.md#long-answers-as-tasks). */
  continuity: { background: BackgroundResponses };
  /** The package version, for `serverInfo`. */
  version: string;
  /** The base URL of the adapter's document page, when it serves one (the embedded workspace). */
  documentPage?: (() => string) | undefined;
  /** Signs the links to that page where it asks for a key (listed keys). */
  documentLinks?: DocumentLinkSigning | undefined;
  /** The documents `fetch` returns whole (the embedded workspace's); without it, `fetch` returns the cited passage. */
  documents?: DocumentReader | undefined;
}

/**
 * How a request reaches the MCP endpoint: with a key, as every answer route (`/mcp`), or behind
 * the OAuth edge (`/oauth/mcp`), which authenticates with the grant it admitted.
 */
export interface McpEdge {
  authenticate: Authenticator;
  /**
   * Behind OAuth: the workspace refused the caller's key on a tool call; returns the 401
   * `invalid_token` to answer instead of a tool error, so that the client authorizes again.
   */
  upstreamRejected?: ((request: IncomingMessage) => Promise<AdapterError>) | undefined;
}

/** Serves one request to the MCP endpoint, in the workspace its path names (`/mcp/{workspace}`), if any. */
export type McpServe = (call: RouteCall, pathWorkspace: string | undefined) => Promise<void>;

/** The MCP endpoint's one handler, at `/mcp` and behind any other edge, and the tools it lists. */
export interface McpServing {
  /** `POST /mcp` (and `/mcp/{workspace}`), authenticated as the answer routes are. */
  serve: McpServe;
  /** The same endpoint (its tasks, their counts, its card) behind another edge: `/oauth/mcp`. */
  behind(edge: McpEdge): McpServe;
  tools: ListedTool[];
}

/** One MCP request past the edge: the exchange the SDK serves, and who asks in which workspace. */
interface ToolExchange extends McpExchange, IdentifiedToolRequest {
  request: IncomingMessage;
  /** The edge it came through. */
  edge: McpEdge;
  response: ServerResponse;
  context: RequestContext;
  links: SourceLinker;
  /** The meter of a tool call that asks the workspace (docs/rate-limits.md). */
  admission: UsageMeter;
  /** Whether this request's host shows the answer card (docs/mcp.md#the-answer-card). */
  card: boolean;
  /** The card's HTML, when this request's server serves it as a resource. */
  cardResource: string | null;
}

/** The revision whose every request carries its client's capabilities (so the card is for hosts that declare it). */
const MODERN_REVISION = "2026-07-28";

/**
 * The remote MCP server's handler (docs/architecture.md#mcp-tools), and the tools it lists.
 * Streamable HTTP, stateless. The edge is the answer routes' (origin, authentication, workspace,
 * concurrency caps, body limits); one `readJsonRpc` reads the body for every decision here; the
 * tools run on the same answer core, through their own typed `run`. Built once per adapter, whatever
 * edges serve it: one set of tasks and of their counts per credential.
 */
export function mcpHandler(options: McpRouteOptions): McpServing {
  const { config, runner } = options;
  // The card's HTML, read once: MCP_APPS=off (or a build without it) links no card and serves no resources.
  const card = config.mcp.apps ? readAnswerCard() : null;
  if (config.mcp.apps && card === null) options.logger.warn("MCP_APPS=on but the answer card is not built (npm run build): the tools link no card");
  // A sweep looks every quarter of its interval: a silence of 4/5 of SSE_KEEPALIVE_MS, found within
  // another 1/5, gives a waiting call a progress notification at least every SSE_KEEPALIVE_MS.
  const sweep = options.sweeps.of(Math.max(10, Math.floor((config.answers.sseKeepAliveMs * 4) / 5)));
  const { documentPage, documentLinks } = options;
  const linkSettings = { template: config.answers.sourceUrlTemplate, documentPage, documentLinks };
  // MCP_TASKS=off: no task is advertised or answered, and nothing of them is built.
  const taskSettings = config.mcp.tasks;
  const tasks = taskSettings
    ? new McpTasks({
        runner,
        background: options.continuity.background,
        // A task lives no longer than the background answer it is.
        settings: { ...taskSettings, maxTtlMs: Math.min(taskSettings.maxTtlMs, config.continuity.responsesTtlSeconds * 1000) },
        clock: options.clock,
        ids: options.ids,
        logger: options.logger,
        links: (workspace) => sourceLinker(linkSettings, workspace),
      })
    : undefined;
  const taskSweep = options.sweeps.of(config.answers.sseKeepAliveMs);
  // The SDK is loaded only where MCP is on (MCP=off costs nothing): here, while the adapter starts.
  const endpoint: Promise<McpEndpoint<ToolExchange>> = Promise.all([import("./mcp-endpoint.js"), import("./tool-server.js")]).then(
    ([{ McpEndpoint }, { checkedTools, createToolServer, serverIdentity }]) => {
      const withTasks = tasks !== undefined;
      const listings = {
        plain: checkedTools(listedTools({ card: false, tasks: withTasks })),
        card: checkedTools(listedTools({ card: true, tasks: withTasks })),
      };
      return new McpEndpoint<ToolExchange>({
        identity: serverIdentity(options.version),
        keepAliveMs: config.answers.sseKeepAliveMs,
        logger: options.logger,
        serverFor: (exchange) =>
          createToolServer({
            version: options.version,
            instructions: instructionsFor(exchange.workspace),
            revision: exchange.revision,
            tools: exchange.card ? listings.card : listings.plain,
            card: exchange.cardResource,
            tasks: withTasks,
            run: (call) => runTool(call, exchange),
          }),
      });
    },
  );

  /** One request, in the answer routes' order of checks where it applies (docs/architecture/edge.md#the-order-of-checks). */
  async function handle(call: RouteCall, pathWorkspace: string | undefined, edge: McpEdge): Promise<void> {
    const { request, response, context } = call;
    const identified = identifyToolRequest(request, pathWorkspace, { ...edge, config });
    let body: unknown;
    try {
      body = await readToolRequestBody(request, config.limits);
    } catch (error) {
      sendJsonRpcError(response, toAdapterError(error));
      return;
    }
    context.inWorkspace(identified.workspace);
    const message = readJsonRpc(body);
    // One admission: the caps for every request (a plain 429), and the key's rate limits for a call of a tool that
    // asks the workspace, before the SDK sees it: over a limit a 429 and a JSON-RPC error naming the call.
    const mode = message.kind === "tool-call" ? (toolNamed(message.name)?.mode ?? null) : null;
    const asking = message.kind === "tool-call" && mode !== null ? message.id : undefined;
    const { identity, workspace } = identified;
    const asker = { principal: identity.principal, account: identity.account.id };
    const cost = message.kind === "tool-call" && mode !== null ? { mode, prompt: questionOf(message.request), choices: 1 } : undefined;
    let admission: Admitted;
    try {
      admission = await admit(context, { ...asker, workspace, asksWorkspace: asking !== undefined, cost }, options);
    } catch (error) {
      sendJsonRpcError(response, toAdapterError(error), asking);
      return;
    }
    tellLimits(response, admission);
    const header = request.headers["mcp-protocol-version"];
    const revision = typeof header === "string" ? header : undefined;
    const shown = card !== null && (revision === MODERN_REVISION ? declaresAnswerCard(message.meta) : true);
    const exchange: ToolExchange = {
      ...identified,
      request,
      edge,
      principal: identified.identity.principal,
      revision,
      message,
      controller: context.abortWhenLeft(),
      response,
      context,
      links: sourceLinker(linkSettings, identified.workspace),
      admission: admission.meter,
      card: shown,
      cardResource: shown || readsResources(message) ? card : null,
    };
    const asTask = tasks && taskRequest(request.headers, message, body);
    if (tasks && asTask) {
      const served = await endpoint;
      const caller = { identity, workspace, admission };
      const accept = request.headers.accept;
      const task = { cardWorkspace: shown ? workspace : null };
      const acceptsStream = typeof accept === "string" && accept.includes("text/event-stream");
      const signal = exchange.controller.signal;
      const refuse = (failure: AdapterError) => refuseKey(failure, exchange);
      const taskExchange = { response, context, caller, task, acceptsStream, signal, refuseKey: refuse };
      await answerTaskRequest(asTask, taskExchange, { tasks, identity: served.identity, sweep: taskSweep });
      return;
    }
    await (await endpoint).serve(request, response, body, exchange);
  }

  /** Runs one valid tool call: where a tool call starts and ends. Never throws: a failure is a tool error. */
  function runTool(call: ToolCall, exchange: ToolExchange): Promise<CallToolResult> {
    exchange.context.callingTool(call.tool.name);
    const context: ToolContext = {
      workspace: exchange.workspace,
      links: exchange.links,
      card: exchange.card,
      documents: options.documents,
      answer: (mode, input) => answerTool(mode, input, call, exchange),
    };
    return call.run(context);
  }

  /**
   * Asks the workspace and follows the answer to its end, through the answer runner (the same plan,
   * service and events as a chat completion), collected for the tool result, with progress
   * notifications (each step; a sign of life after a silence) when the call asked for them. Ends
   * early when the client leaves or cancels (the upstream wait stops with it), or at shutdown.
   */
  async function answerTool(mode: Mode, input: AnswerToolInput, call: ToolCall, exchange: ToolExchange): Promise<Answered> {
    const controller = new AbortController();
    // The client cancelled the call or left: the answer stops as a chat completion's does when its client leaves.
    const stop = () => controller.abort(new ClientClosedError());
    call.signal.addEventListener("abort", stop, { once: true });
    exchange.controller.signal.addEventListener("abort", stop, { once: true });
    let shutdown: AdapterError | undefined;
    const untrack = runner.context.lifecycle.trackStream({
      fail: async (error) => {
        shutdown = error;
        controller.abort();
      },
    });
    try {
      const { identity, workspace, admission, context } = exchange;
      const plan = { prompt: input.question, mode, choices: 1, continueQueryId: input.query_id ?? null };
      const spanStart = { operation: "execute_tool", tool: call.tool.name, model: mode, stream: false } as const;
      const namesQuery = Boolean(input.query_id);
      const order = { context, identity, workspace, meter: admission, input: plan, namesQuery, spanStart, controller };
      const progress = call.progressToken === undefined ? undefined : progressSink(call, call.progressToken, mode, sweep);
      const delivery = collect(new AnswerToolEncoder(mode, exchange.links), { progress, shutdown: () => shutdown });
      const answered = await runner.run(runner.plan(order), delivery);
      if (answered instanceof AnswerToolEncoder) return { output: answered.output() };
      await refuseKey(answered, exchange);
      return { error: answered.message };
    } catch (error) {
      // Whatever the wait rejected with once the client left (the runner also aborts the controller as it cleans up after a failure).
      const left = controller.signal.reason instanceof ClientClosedError ? controller.signal.reason : undefined;
      const failure = shutdown ?? left ?? toAdapterError(error);
      if (failure instanceof ClientClosedError) options.logger.debug({ tool: call.tool.name }, "tool call cancelled: the client left");
      else if (failure.status >= 500) options.logger.warn({ err: { message: failure.message } }, "tool call failed");
      await refuseKey(failure, exchange);
      return { error: failure.message };
    } finally {
      untrack();
      call.signal.removeEventListener("abort", stop);
      exchange.controller.signal.removeEventListener("abort", stop);
    }
  }

  /**
   * A tool call whose key the workspace refused (its 401), behind OAuth: answered with the OAuth
   * edge's 401 `invalid_token` (the grant revoked) rather than a tool error, when nothing of the
   * response has gone yet (a call streaming progress has: it keeps its tool error).
   */
  async function refuseKey(failure: AdapterError, exchange: ToolExchange): Promise<void> {
    const { upstreamRejected } = exchange.edge;
    const { response, message } = exchange;
    if (!upstreamRejected || failure.status !== 401 || response.headersSent) return;
    const refusal = await upstreamRejected(exchange.request);
    if (!response.headersSent) sendJsonRpcError(response, refusal, message.kind === "tool-call" ? message.id : null);
  }

  const served = (edge: McpEdge): McpServe => (call, pathWorkspace) => handle(call, pathWorkspace, edge);
  return {
    serve: served({ authenticate: options.authenticate }),
    behind: served,
    tools: listedTools({ card: card !== null, tasks: tasks !== undefined }),
  };
}

/** The question a tool call asks (an answer tool's `question`, `search`'s `query`), for the cost its admission reserves; "" when it sent none. */
function questionOf(request: ToolCallRequest): string {
  const args: unknown = request.params.arguments;
  const fields = new Map<string, unknown>(typeof args === "object" && args !== null ? Object.entries(args) : []);
  return [fields.get("question"), fields.get("query")].find((value): value is string => typeof value === "string") ?? "";
}

/** Whether a request reads resources: served whenever the card is on, whatever the host declared (it asks for the card itself). */
function readsResources(message: JsonRpcMessage): boolean {
  return message.kind === "other" && message.method !== undefined && message.method.startsWith("resources/");
}
