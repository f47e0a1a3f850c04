import { z } from "zod";
import { documented, integer } from "./variables.js";

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
  MCP_TASKS: documented(
    z.enum(["on", "off"]).default("on"),
    "`on` lets `reason` and `build` run as MCP tasks (docs/mcp.md#long-answers-as-tasks): a client that asks gets the task at once and polls it, on any replica; `off` advertises no tasks and answers every call synchronously",
  ),
  MCP_TASK_TTL_MS: documented(
    integer(3_600_000, 1000),
    "How long a task and its result can be read after it was created, when the client asks for no TTL (a client's own is honoured up to `MCP_TASK_MAX_TTL_MS`)",
  ),
  MCP_TASK_MAX_TTL_MS: documented(
    integer(24 * 3_600_000, 1000),
    "The longest TTL a task gets, whatever the client asks (and never longer than `RESPONSES_TTL_SECONDS`, which keeps background answers)",
  ),
  MCP_TASK_POLL_INTERVAL_MS: documented(integer(2000, 100), "The poll interval a task suggests to its client (`pollInterval`, `pollIntervalMs`)"),
  MCP_TASKS_PER_CREDENTIAL: documented(
    integer(10, 1),
    "Tasks one credential may have running on one replica at a time; a task asked for beyond it is refused (JSON-RPC error, HTTP 429) until one ends",
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
    /** MCP tasks for `reason` and `build` (docs/mcp.md#long-answers-as-tasks), or undefined when `MCP_TASKS` is off. */
    tasks:
      env.MCP_TASKS === "on"
        ? {
            ttlMs: env.MCP_TASK_TTL_MS,
            /** At most the continuity section's `responsesTtlSeconds` too (where the task is built). */
            maxTtlMs: env.MCP_TASK_MAX_TTL_MS,
            pollIntervalMs: env.MCP_TASK_POLL_INTERVAL_MS,
            perCredential: env.MCP_TASKS_PER_CREDENTIAL,
          }
        : undefined,
  };
}

/** The remote MCP server: served or not, its answer card and its tasks (`MCP`, `MCP_APPS`, `MCP_TASK*`). */
export type McpSettings = ReturnType<typeof mcpSettings>;
