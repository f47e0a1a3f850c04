import { z } from "zod";
import type { ResponseRequest } from "./response-request.js";

/**
 * What a response echoes of its request, and its identity (docs/architecture.md#data-flow-of-one-request):
 * a schema, since a stored response keeps it and reads it back parsed.
 */
export const responseMetaSchema = z.object({
  /** `resp_…`; its items are `rs_…` and `msg_…` with the same suffix. */
  id: z.string(),
  createdAt: z.int(),
  model: z.string(),
  instructions: z.string().nullable(),
  previousResponseId: z.string().nullable(),
  store: z.boolean(),
  metadata: z.record(z.string(), z.string()),
  temperature: z.number().nullable(),
  topP: z.number().nullable(),
  maxOutputTokens: z.int().nullable(),
  parallelToolCalls: z.boolean(),
  user: z.string().nullable(),
  truncation: z.enum(["auto", "disabled"]),
  tools: z.array(z.unknown()),
  toolChoice: z.unknown(),
  reasoning: z.object({ effort: z.string().nullable(), summary: z.string().nullable() }),
  /** Echoed as `background: true` when the request ran in the background (docs/responses-api.md#background-mode). */
  background: z.boolean().optional(),
  /** The conversation the response belongs to (docs/responses-api.md#conversations), echoed as `conversation: {id}`. */
  conversation: z.string().nullable().optional(),
  /** The JSON format asked for (`text.format` `json_schema` or `json_object`), echoed as sent (docs/structured-answers.md). */
  textFormat: z.looseObject({ type: z.string() }).optional(),
  /** A forced function, answered as its call (docs/structured-answers.md#a-forced-function): the output is a `function_call` item. */
  call: z.object({ name: z.string() }).optional(),
});
/** What a response echoes of its request, and its identity. */
export type ResponseMeta = z.infer<typeof responseMetaSchema>;

/** The response's echo of its request: what applies is echoed, OpenAI's defaults otherwise. */
export function metaOf(id: string, body: ResponseRequest, createdAt: number, previousResponseId: string | null): ResponseMeta {
  const reasoning = body.reasoning ?? {};
  const format: unknown = body.text?.format;
  const asksJson = isFormat(format) && (format.type === "json_schema" || format.type === "json_object");
  return {
    id,
    createdAt,
    model: body.model,
    instructions: body.instructions ?? null,
    previousResponseId,
    store: body.store !== false,
    metadata: body.metadata ?? {},
    temperature: body.temperature ?? 1,
    topP: body.top_p ?? 1,
    maxOutputTokens: body.max_output_tokens ?? null,
    parallelToolCalls: body.parallel_tool_calls ?? true,
    user: body.user ?? null,
    truncation: body.truncation ?? "disabled",
    tools: body.tools ?? [],
    toolChoice: body.tool_choice ?? "auto",
    reasoning: {
      effort: typeof reasoning.effort === "string" ? reasoning.effort : null,
      summary: typeof reasoning.summary === "string" ? reasoning.summary : null,
    },
    ...(asksJson ? { textFormat: format } : {}),
  };
}

function isFormat(value: unknown): value is { type: string } {
  return typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string";
}
