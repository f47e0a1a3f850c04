import { type ListedTool, TOOL_NAMES } from "../../dialects/mcp/tool-definitions.js";
import { headerParameters, responseHeaders } from "../headers.js";
import { errorResponse } from "../openapi.js";

// The OpenAPI operations of the answer routes, kept out of the routes so that each reads as what it does.

const bearer = [{ bearer: [] }];

/** `POST /v1/chat/completions`. */
export const chatCompletionsOperation = {
  summary: "Answer from the workspace: one query per choice, JSON or a stream of chunks",
  security: bearer,
  // The headers of every answer operation come from the one list of the adapter's headers (http/headers.ts).
  parameters: headerParameters("chat-completions"),
  requestBody: {
    required: true,
    content: { "application/json": { schema: { $ref: "#/components/schemas/ChatCompletionRequest" } } },
  },
  responses: {
    "200": {
      description: "A completion, or with `stream: true` server-sent events of chunks ending with `data: [DONE]`",
      headers: responseHeaders("chat-completions"),
      content: {
        "application/json": { schema: { $ref: "#/components/schemas/ChatCompletion" } },
        "text/event-stream": { schema: { $ref: "#/components/schemas/ChatCompletionChunk" } },
      },
    },
    "400": errorResponse("Asks for what the workspace cannot do: JSON that follows a schema or a JSON object, a forced tool call (`param` names it; `LENIENT_PARAMETERS=on` ignores them instead)"),
    "401": errorResponse("No bearer credential, or one the upstream refused"),
    "404": errorResponse("Passed on from the upstream (a query of another workspace, an unknown workspace)"),
    "413": errorResponse("Body larger than the limit"),
    "415": errorResponse("Body not sent as JSON"),
    "422": errorResponse("Invalid request (FastAPI-style `detail` list)"),
    "429": errorResponse("Over a rate limit of this key in the workspace (`retry-after`, `retry-after-ms`), too many requests in flight here, or upstream"),
    "502": errorResponse("The query FAILED, or the upstream failed or could not be reached"),
    "504": errorResponse("The query did not finish before its mode's deadline"),
  },
};

/** `POST /v1/responses`. */
export const createResponseOperation = {
  summary: "Answer from the workspace as an OpenAI response: JSON, or a stream of named events",
  security: bearer,
  parameters: headerParameters("responses"),
  requestBody: { required: true, content: { "application/json": { schema: { $ref: "#/components/schemas/ResponseRequest" } } } },
  responses: {
    "200": {
      description: "A response, or with `stream: true` server-sent events from `response.created` to `response.completed`",
      headers: responseHeaders("responses"),
      content: {
        "application/json": { schema: { $ref: "#/components/schemas/Response" } },
        "text/event-stream": { schema: { type: "object" } },
      },
    },
    "400": errorResponse("Asks for what the workspace cannot do: JSON that follows a schema or a JSON object, a forced tool call (`param` names it; `LENIENT_PARAMETERS=on` ignores them instead)"),
    "401": errorResponse("No bearer credential, or one the upstream refused"),
    "404": errorResponse("`previous_response_id` names no response of this credential and workspace"),
    "422": errorResponse("Invalid request (FastAPI-style `detail` list)"),
    "429": errorResponse("Over a rate limit of this key in the workspace (`retry-after`, `retry-after-ms`), too many requests in flight here, or upstream"),
    "502": errorResponse("The query FAILED, or the upstream failed or could not be reached"),
    "504": errorResponse("The query did not finish before its mode's deadline"),
  },
};

/** `POST /mcp` and `POST /mcp/{workspace}`: the MCP endpoint, its tools listed under `x-mcp-tools`. */
export function mcpOperation(pathWorkspace: boolean, tools: ListedTool[]) {
  const summary = pathWorkspace
    ? "The same MCP server, for one workspace named in the path (for clients that can set only a URL and one header)"
    : "The workspace as a remote MCP server (tools)";
  const parameters = pathWorkspace
    ? [{ name: "workspace", in: "path", required: true, schema: { type: "string" }, description: "Workspace id (the `Service-Workspace` header wins when both are sent)" }]
    : [];
  return {
    summary,
    description: `Streamable HTTP (stateless; JSON-RPC 2.0 in, JSON or server-sent events out) for MCP protocol revisions 2025-06-18, 2025-11-25 and 2026-07-28. Tools: ${TOOL_NAMES.join(", ")} (listed with their schemas under \`x-mcp-tools\`). A failed query, a deadline or an upstream fault is a tool result with \`isError: true\`; an unknown tool, a malformed or oversized body are JSON-RPC errors.`,
    security: [{ bearer: [] }],
    parameters: [...headerParameters("mcp"), ...parameters],
    requestBody: { required: true, content: { "application/json": { schema: { type: "object", description: "One JSON-RPC 2.0 message of the Model Context Protocol" } } } },
    responses: {
      "200": {
        description: "The JSON-RPC response, as JSON or (when progress is sent first) an SSE stream ending with it",
        headers: responseHeaders("mcp"),
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
  };
}
