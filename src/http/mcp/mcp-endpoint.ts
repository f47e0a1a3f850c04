import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  type AuthInfo,
  createMcpHandler,
  isLegacyRequest,
  type McpHttpHandler,
  type Server,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import type { Logger } from "pino";
import type { JsonRpcMessage } from "../../dialects/mcp/json-rpc-message.js";
import type { ServerIdentity } from "./json-rpc-result.js";
import { toWebRequest, writeWebResponse } from "./web-exchange.js";

/** One MCP request admitted at the edge: what its per-request server is built for. */
export interface McpExchange {
  /** Hash of the caller's credential: scopes cancellations to their own calls. */
  principal: string;
  /** The protocol revision the request says it speaks (`MCP-Protocol-Version`), if any. */
  revision: string | undefined;
  /** Aborted when the client leaves, or cancels the call this request carries. */
  controller: AbortController;
  /** The request's body as `readJsonRpc` read it at the edge. */
  message: JsonRpcMessage;
}

/** What the endpoint is built from. */
export interface McpEndpointOptions<Exchange extends McpExchange> {
  /** A fresh MCP server for one request (the SDK serves one exchange per instance). */
  serverFor(exchange: Exchange): Server;
  /** Who the server says it is (the per-request servers' `serverInfo`): stamped on 2026-07-28 task replies. */
  identity: ServerIdentity;
  /** Comment keep-alives on SSE responses. */
  keepAliveMs: number;
  logger: Logger;
}

const EXCHANGE = "workspace-openai-adapter/exchange";

/**
 * Streamable HTTP for every revision the adapter serves (docs/architecture.md#mcp-tools),
 * stateless: each POST gets a fresh server instance, so any replica answers any request. Every
 * request is the SDK's: 2026-07-28 requests (the `_meta` envelope) go through its
 * `createMcpHandler`, which answers JSON, or SSE once a handler sends progress; 2025-era requests
 * are served on its stateless transport, JSON unless the call asked for progress. A 2025 `initialize` is
 * answered with a random `Mcp-Session-Id` that nothing stores: clients echo it, which is what lets
 * a `notifications/cancelled` (a POST of its own) find the call it cancels on this replica
 * without mistaking another client's call with the same request id for it.
 */
export class McpEndpoint<Exchange extends McpExchange> {
  private readonly modern: McpHttpHandler;
  /** 2025-era tool calls in flight here, by principal, session and request id: what a cancellation aborts. */
  private readonly cancellable = new Map<string, AbortController>();
  /** Who the server says it is (stamped on 2026-07-28 task replies, which the edge writes itself). */
  get identity(): ServerIdentity {
    return this.options.identity;
  }

  constructor(private readonly options: McpEndpointOptions<Exchange>) {
    this.modern = createMcpHandler((context) => options.serverFor(exchangeOf<Exchange>(context.authInfo)), {
      legacy: "reject",
      responseMode: "auto",
      keepAliveMs: options.keepAliveMs,
      onerror: (error) => options.logger.debug({ err: { message: error.message } }, "mcp request rejected"),
    });
  }

  /** Serves one POST whose JSON body the edge has read (`exchange.message` is how it read it); writes the whole response. */
  async serve(request: IncomingMessage, response: ServerResponse, body: unknown, exchange: Exchange): Promise<void> {
    const { message } = exchange;
    const web = toWebRequest(request, exchange.controller.signal);
    if (!(await isLegacyRequest(web, body))) {
      const { principal } = exchange;
      const authInfo: AuthInfo = { token: principal, clientId: principal, scopes: [], extra: { [EXCHANGE]: exchange } };
      await writeWebResponse(await this.modern.fetch(web, { parsedBody: body, authInfo }), response);
      return;
    }
    const session = web.headers.get("mcp-session-id") ?? undefined;
    if (message.kind === "cancellation") {
      if (session) this.cancellable.get(callKey(exchange.principal, session, message.requestId))?.abort();
      await writeWebResponse(new Response(null, { status: 202 }), response);
      return;
    }
    const call = message.kind === "tool-call" ? message : undefined;
    const key = call && session ? callKey(exchange.principal, session, call.id) : undefined;
    if (key) this.cancellable.set(key, exchange.controller);
    const server = this.options.serverFor(exchange);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      // JSON unless there is progress to send before the result (docs/architecture.md#mcp-tools).
      enableJsonResponse: call?.progressToken === undefined,
      keepAliveMs: this.options.keepAliveMs,
    });
    try {
      await server.connect(transport);
      const answer = await transport.handleRequest(web, { parsedBody: body });
      const headers: Record<string, string> = message.kind === "initialize" && answer.ok ? { "mcp-session-id": randomUUID() } : {};
      await writeWebResponse(answer, response, headers);
    } finally {
      if (key && this.cancellable.get(key) === exchange.controller) this.cancellable.delete(key);
      await transport.close().catch(() => undefined);
      await server.close().catch(() => undefined);
    }
  }

  /** 2025-era calls that can be cancelled now (for tests and metrics). */
  get cancellableCalls(): number {
    return this.cancellable.size;
  }
}

/** The exchange the edge handed to the SDK with a request, read back where the SDK builds the server. */
function exchangeOf<Exchange extends McpExchange>(authInfo: AuthInfo | undefined): Exchange {
  const exchange = authInfo?.extra?.[EXCHANGE] as Exchange | undefined;
  if (!exchange) throw new Error("An MCP request reached the SDK without its exchange");
  return exchange;
}

function callKey(principal: string, session: string, requestId: string | number): string {
  return `${principal}\u0000${session}\u0000${typeof requestId}:${requestId}`;
}
