import { z } from "zod";
import { MODES } from "../core/modes.js";
import { chatCompletionChunkSchema, chatCompletionSchema } from "../dialects/chat-completions/chat-completion.js";
import { errorBodySchema } from "../errors/error-body.js";
import { modelSchema } from "./routes/model-schema.js";
import { chatCompletionRequestSchema } from "../dialects/chat-completions/chat-request.js";

/** JSON Schema 2020-12 (what OpenAPI 3.1 uses) of a zod schema; refinements the format cannot say are left out. */
function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Record<string, unknown>;
  return rest;
}

const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorBody" } } },
});

/**
 * The adapter's own OpenAPI 3.1 document, written from the same zod schemas that validate
 * requests and type responses, so that there is no second copy of the shapes to drift.
 */
export function openApiDocument(options: { version: string; maxChoices: number; maxMessages: number }) {
  const bearer = [{ bearer: [] }];
  const workspaceHeader = {
    name: "Service-Workspace",
    in: "header",
    required: false,
    description: "Workspace id; else the workspace named in the model (`<workspace>/ask`); else the configured default",
    schema: { type: "string", pattern: "^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$" },
  };
  return {
    openapi: "3.1.0",
    info: {
      title: "workspace-openai-adapter",
      version: options.version,
      description:
        "OpenAI-compatible chat completions over a Workspace Knowledge Service. Errors carry the interface's `detail` and an OpenAI-style `error`.",
    },
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      schemas: {
        ChatCompletionRequest: jsonSchema(chatCompletionRequestSchema(options), "input"),
        ChatCompletion: jsonSchema(chatCompletionSchema, "output"),
        ChatCompletionChunk: jsonSchema(chatCompletionChunkSchema, "output"),
        Model: jsonSchema(modelSchema, "output"),
        ModelList: jsonSchema(z.object({ object: z.literal("list"), data: z.array(modelSchema) }), "output"),
        ErrorBody: jsonSchema(errorBodySchema, "output"),
      },
    },
    paths: {
      "/v1/chat/completions": {
        post: {
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
            "401": errorResponse("No bearer credential, or one the upstream refused"),
            "404": errorResponse("Passed on from the upstream (a query of another workspace, an unknown workspace)"),
            "413": errorResponse("Body larger than the limit"),
            "415": errorResponse("Body not sent as JSON"),
            "422": errorResponse("Invalid request (FastAPI-style `detail` list)"),
            "429": errorResponse("Too many requests in flight here, or upstream"),
            "502": errorResponse("The query FAILED, or the upstream failed or could not be reached"),
            "504": errorResponse("The query did not finish before its mode's deadline"),
          },
        },
      },
      "/v1/models": {
        get: {
          summary: `The modes (${MODES.join(", ")}) and <workspace>/<mode> for each listed workspace`,
          security: bearer,
          responses: {
            "200": { description: "Models", content: { "application/json": { schema: { $ref: "#/components/schemas/ModelList" } } } },
            "401": errorResponse("No bearer credential"),
          },
        },
      },
      "/v1/models/{id}": {
        get: {
          summary: "One model",
          security: bearer,
          parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
          responses: {
            "200": { description: "The model", content: { "application/json": { schema: { $ref: "#/components/schemas/Model" } } } },
            "404": errorResponse("No such model"),
          },
        },
      },
      "/health": { get: { summary: "Liveness", responses: { "200": { description: "The process is up" } } } },
      "/ready": {
        get: {
          summary: "Readiness: not draining and the upstream answers",
          responses: { "200": { description: "Ready" }, "503": { description: "Draining, or the upstream does not answer" } },
        },
      },
      "/metrics": { get: { summary: "Prometheus metrics", responses: { "200": { description: "Text exposition format" } } } },
    },
  };
}
