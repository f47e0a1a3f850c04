import { mcpHandler, type McpRouteOptions } from "../mcp/mcp-handler.js";
import type { Route } from "../route-table.js";
import { mcpOperation } from "./answer-operations.js";

/**
 * The remote MCP server's routes (docs/architecture.md#mcp-tools): `POST /mcp` and
 * `POST /mcp/{workspace}`, one handler (src/http/mcp/).
 */
export function mcpRoutes(options: McpRouteOptions): Route[] {
  const { handler, tools } = mcpHandler(options);
  const fast = { fast: handler };
  return [
    { method: "POST", path: "/mcp", handler: fast, operation: mcpOperation(false, tools) },
    { method: "POST", path: "/mcp/{workspace}", handler: fast, operation: mcpOperation(true, tools) },
  ];
}
