import { CreateTaskResultV1Schema } from "@modelcontextprotocol/ext-tasks/core/v1";
import { Client } from "mcp-sdk-v1/client/index.js";
import { StreamableHTTPClientTransport } from "mcp-sdk-v1/client/streamableHttp.js";
import { API_KEY } from "./start-stack.js";

/** Two teams' client keys and a gateway's, behind the deployment's one workspace key (docs/governance.md#whose-query-it-is). */
export const TEAM_A = "sk-team-a-0001";
export const TEAM_F = "sk-team-f-0001";
export const GATEWAY = "sk-gateway-0001";

/** The settings of a deployment whose callers share its workspace key (`API_KEY`, the embedded workspace's). */
export const SHARED_KEY = {
  WORKSPACE_API_KEY: API_KEY,
  ADAPTER_API_KEYS: `team-a=${TEAM_A},team-f=${TEAM_F}`,
  GATEWAY_API_KEYS: `litellm=${GATEWAY}`,
  MCP_TASK_POLL_INTERVAL_MS: "100",
  REALTIME: "off",
};

/** The headers of `key`'s requests to workspace acme. */
export const headersOf = (key: string, extra: Record<string, string> = {}) => ({
  authorization: `Bearer ${key}`,
  "service-workspace": "acme",
  "content-type": "application/json",
  ...extra,
});

/** A chat completion from `key` (model `ask` unless the body says): its status, `Service-Query-Id` and body. */
export async function chatAs(url: string, key: string, body: Record<string, unknown>, extra: Record<string, string> = {}) {
  const response = await fetch(`${url}/v1/chat/completions`, { method: "POST", headers: headersOf(key, extra), body: JSON.stringify({ model: "ask", ...body }) });
  return { status: response.status, queryId: response.headers.get("service-query-id"), body: (await response.json()) as any };
}

/** An MCP client of 2025-11-25 (the SDK v1 line, with its tasks client) as `key` (or an access token), on `/mcp` unless `path` says. */
export async function mcpClientAs(url: string, key: string, extra: Record<string, string> = {}, path = "/mcp"): Promise<Client> {
  const client = new Client({ name: "tenancy-test", version: "1.0.0" });
  const headers = { authorization: `Bearer ${key}`, "service-workspace": "acme", ...extra };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}${path}`), { requestInit: { headers } }));
  return client;
}

/** Creates `reason` as an MCP task (continuing `queryId` when given): the created task, or the SDK's error. */
export function createReasonTask(client: Client, question: string, queryId?: string): Promise<any> {
  const params = { name: "reason", arguments: { question, ...(queryId === undefined ? {} : { query_id: queryId }) }, task: { ttl: 60_000 } };
  return client.request({ method: "tools/call", params }, CreateTaskResultV1Schema as any);
}
