import { errorResponse, workspaceHeader } from "../openapi.js";

// The OpenAPI operations of the answer routes, kept out of the routes so that each reads as what it does.

const bearer = [{ bearer: [] }];

/** `POST /v1/chat/completions`. */
export const chatCompletionsOperation = {
  summary: "Answer from the workspace: one query per choice, JSON or a stream of chunks",
  security: bearer,
  parameters: [
    workspaceHeader,
    { name: "X-Conversation-Id", in: "header", required: false, schema: { type: "string" }, description: "Continue this conversation's query" },
  ],
  requestBody: {
    required: true,
    content: { "application/json": { schema: { $ref: "#/components/schemas/ChatCompletionRequest" } } },
  },
  responses: {
    "200": {
      description: "A completion, or with `stream: true` server-sent events of chunks ending with `data: [DONE]`",
      headers: { "Service-Query-Id": { description: "The upstream query id(s)", schema: { type: "string" } } },
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
  parameters: [workspaceHeader],
  requestBody: { required: true, content: { "application/json": { schema: { $ref: "#/components/schemas/ResponseRequest" } } } },
  responses: {
    "200": {
      description: "A response, or with `stream: true` server-sent events from `response.created` to `response.completed`",
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
