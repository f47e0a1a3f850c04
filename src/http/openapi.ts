import { z } from "zod";
import { ID_PATTERN } from "../core/ids.js";
import { chatCompletionChunkSchema, chatCompletionSchema } from "../dialects/chat-completions/chat-completion.js";
import { responseObjectSchema } from "../dialects/responses/response-object.js";
import { responseRequestSchema } from "../dialects/responses/response-request.js";
import { errorBodySchema } from "../errors/error-body.js";
import { modelSchema } from "../dialects/model-schema.js";
import { chatCompletionRequestSchema } from "../dialects/chat-completions/chat-request.js";

/** JSON Schema 2020-12 (what OpenAPI 3.1 uses) of a zod schema; refinements the format cannot say are left out. */
function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Record<string, unknown>;
  return rest;
}

/** An OpenAPI response whose body is the adapter's error body. */
export const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorBody" } } },
});

/** The `Service-Workspace` header parameter of the routes that select a workspace. */
export const workspaceHeader = {
  name: "Service-Workspace",
  in: "header",
  required: false,
  description: "Workspace id; else the workspace named in the model (`<workspace>/ask`); else the configured default",
  schema: { type: "string", pattern: ID_PATTERN.source },
};

/**
 * The adapter's own OpenAPI 3.1 document, written from the same zod schemas that validate
 * requests and type responses, so that there is no second copy of the shapes to drift.
 */
export function openApiDocument(options: {
  version: string;
  maxChoices: number;
  maxMessages: number;
  /** The route table's paths (RouteTable.openApiPaths). */
  paths: Record<string, Record<string, unknown>>;
}) {
  return {
    openapi: "3.1.0",
    info: {
      title: "workspace-openai-adapter",
      version: options.version,
      description:
        "OpenAI-compatible chat completions and Responses API over a Workspace Knowledge Service. Errors carry the interface's `detail` and an OpenAI-style `error`.",
    },
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      schemas: {
        ChatCompletionRequest: jsonSchema(chatCompletionRequestSchema(options), "input"),
        ChatCompletion: jsonSchema(chatCompletionSchema, "output"),
        ChatCompletionChunk: jsonSchema(chatCompletionChunkSchema, "output"),
        Model: jsonSchema(modelSchema, "output"),
        ModelList: jsonSchema(z.object({ object: z.literal("list"), data: z.array(modelSchema) }), "output"),
        ResponseRequest: jsonSchema(responseRequestSchema(options), "input"),
        Response: jsonSchema(responseObjectSchema, "output"),
        ErrorBody: jsonSchema(errorBodySchema, "output"),
      },
    },
    paths: options.paths,
  };
}
