import { type McpEdge, mcpHandler, type McpRouteOptions, type McpServe } from "../mcp/mcp-handler.js";
import { type Route, route } from "../route-table.js";
import { mcpOperation } from "./answer-operations.js";

/** The MCP endpoint's routes, and the same endpoint for another edge to serve (`/oauth/mcp`). */
export interface McpRoutes {
  routes: Route[];
  /** The endpoint behind another edge: the same tasks and counts, not a second handler. */
  behind(edge: McpEdge): McpServe;
}

/**
 * The remote MCP server's routes (docs/architecture.md#mcp-tools): `POST /mcp` and
 * `POST /mcp/{workspace}`, one handler (src/http/mcp/), built once whatever else serves it.
 */
export function mcpRoutes(options: McpRouteOptions): McpRoutes {
  const { serve, behind, tools } = mcpHandler(options);
  return {
    routes: [
      route("POST", "/mcp", (call) => serve(call, undefined), mcpOperation(false, tools)),
      route("POST", "/mcp/{workspace}", (call) => serve(call, call.params.workspace), mcpOperation(true, tools)),
    ],
    behind,
  };
}
