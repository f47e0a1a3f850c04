import { z } from "zod";
import { documented } from "./variables.js";

/** The mcp section's variables: the remote MCP server (OAuth for it is its own section, src/config/oauth-settings.ts). */
export const mcpVariables = z.object({
  MCP: documented(
    z.enum(["on", "off"]).default("on"),
    "`on` serves the workspace as a remote MCP server (Streamable HTTP, stateless) at `/mcp` and `/mcp/{workspace}`: tools `ask`, `reason`, `build`, `search`, `fetch`; `off` answers 404 there",
  ),
  MCP_APPS: documented(
    z.enum(["on", "off"]).default("on"),
    "`on` links the answer card (an MCP App, `ui://workspace/answer-v1.html`) to `ask`, `reason` and `build` for hosts that render MCP Apps (docs/mcp.md#the-answer-card); `off` serves exactly the tools without it",
  ),
});

/** The mcp section's variables as validated. */
export type McpVariables = z.output<typeof mcpVariables>;

/** The mcp section as the adapter reads it (`config.mcp`). */
export function mcpSettings(env: McpVariables) {
  return {
    /** Whether `/mcp` serves the workspace's tools. */
    enabled: env.MCP === "on",
    /** Whether the answer tools link the answer card (MCP Apps). */
    apps: env.MCP_APPS === "on",
  };
}

/** The remote MCP server: served or not, and its answer card (`MCP`, `MCP_APPS`). */
export type McpSettings = ReturnType<typeof mcpSettings>;
