import { type McpEdge, mcpHandler, type McpRouteOptions } from "../mcp/mcp-handler.js";
import type { FastHandler, Route } from "../route-table.js";
import { mcpOperation } from "./answer-operations.js";

/** The MCP endpoint's routes, and the same handler for another edge to serve (`/oauth/mcp`). */
export interface McpRoutes {
  routes: Route[];
  /** The endpoint behind another edge: the same tasks and counts, not a second handler. */
  behind(edge: McpEdge): FastHandler;
}

/**
 * The remote MCP server's routes (docs/architecture.md#mcp-tools): `POST /mcp` and
 * `POST /mcp/{workspace}`, one handler (src/http/mcp/), built once whatever else serves it.
 */
export function mcpRoutes(options: McpRouteOptions): McpRoutes {
  const { handler, behind, tools } = mcpHandler(options);
  const fast = { fast: handler };
  return {
    routes: [
      { method: "POST", path: "/mcp", handler: fast, operation: mcpOperation(false, tools) },
      { method: "POST", path: "/mcp/{workspace}", handler: fast, operation: mcpOperation(true, tools) },
    ],
    behind,
  };
}
