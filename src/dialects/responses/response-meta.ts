import { z } from "zod";
import type { ResponseRequest } from "./response-request.js";

/**
 * How a response's citations are written (docs/citations.md#the-responses-api), kept in its echo so
 * that a replay, a poll or a takeover on another replica writes them as the first answer did: the
 * format, and what a `url_citation`'s link is made from (`answer/source-links.ts`).
 */
export const citationFormatSchema = z.object({
  format: z.enum(["url_citation", "file_citation", "none"]),
  links: z.object({
    /** `SOURCE_URL_TEMPLATE`, if set. */
    template: z.string().nullable(),
    /** The base URL of the adapter's document page (the embedded workspace), if it serves one. */
    documentPage: z.string().nullable(),
    workspace: z.string(),
  }),
});
/** How a response's citations are written. */
export type CitationFormat = z.infer<typeof citationFormatSchema>;

/**
 * The request's settings a response echoes, as sent or as they applied, under the response object's
 * own names (Open Responses requires each on every response object; none is sent upstream).
 */
export const echoedSettingsSchema = z.object({
  presence_penalty: z.number(),
  frequency_penalty: z.number(),
  top_logprobs: z.int(),
  service_tier: z.string(),
  max_tool_calls: z.int().nullable(),
  safety_identifier: z.string().nullable(),
  prompt_cache_key: z.string().nullable(),
});
/** The settings a response echoes. */
export type EchoedSettings = z.infer<typeof echoedSettingsSchema>;

/** The settings a response echoes: what the request sent, or the value that applies. */
export function echoedSettings(body: Partial<Record<keyof EchoedSettings, unknown>>): EchoedSettings {
  const number = (value: unknown, otherwise: number) => (typeof value === "number" ? value : otherwise);
  const text = (value: unknown) => (typeof value === "string" ? value : null);
  return {
    presence_penalty: number(body.presence_penalty, 0),
    frequency_penalty: number(body.frequency_penalty, 0),
    top_logprobs: number(body.top_logprobs, 0),
    service_tier: text(body.service_tier) ?? "default",
    max_tool_calls: typeof body.max_tool_calls === "number" ? body.max_tool_calls : null,
    safety_identifier: text(body.safety_identifier),
    prompt_cache_key: text(body.prompt_cache_key),
  };
}

/**
 * What a response echoes of its request, and its identity (docs/architecture.md#data-flow-of-one-request):
 * a schema, since a stored response keeps it and reads it back parsed. Fields added after responses
 * were first stored are optional: a record written before them still parses, and reads as it was sent.
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
  /** The settings echoed as sent or as they applied; absent in a record stored before them (`echoedSettings({})` then). */
  settings: echoedSettingsSchema.optional(),
  /** How the citations are written; absent in a record stored before there was a choice: `file_citation`, as they were then. */
  citations: citationFormatSchema.optional(),
});
/** What a response echoes of its request, and its identity. */
export type ResponseMeta = z.infer<typeof responseMetaSchema>;

/** The form a record stored before `citations` existed was written in. */
export const FORMER_CITATIONS: CitationFormat = { format: "file_citation", links: { template: null, documentPage: null, workspace: "" } };

/**
 * The response's echo of its request: what applies is echoed, OpenAI's defaults otherwise. Function
 * tools are echoed with `description`, `parameters` and `strict` (null when not sent), and a JSON
 * format with `description` (null) and `strict` (false), as OpenAI's response object and Open
 * Responses' `ResponseResource` carry them; nothing sent is dropped.
 */
export function metaOf(
  id: string,
  body: ResponseRequest,
  createdAt: number,
  previousResponseId: string | null,
  citations?: CitationFormat,
): ResponseMeta {
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
    tools: (body.tools ?? []).map(echoedTool),
    toolChoice: body.tool_choice ?? "auto",
    reasoning: {
      effort: typeof reasoning.effort === "string" ? reasoning.effort : null,
      summary: typeof reasoning.summary === "string" ? reasoning.summary : null,
    },
    ...(asksJson ? { textFormat: echoedFormat(format) } : {}),
    settings: echoedSettings(body),
    ...(citations ? { citations } : {}),
  };
}

/** A tool as the response echoes it: a function with every field the schemas require, any other tool as sent. */
function echoedTool(tool: Record<string, unknown>): Record<string, unknown> {
  if (tool.type !== "function") return tool;
  return { ...tool, description: tool.description ?? null, parameters: tool.parameters ?? null, strict: tool.strict ?? null };
}

function echoedFormat(format: { type: string } & Record<string, unknown>): { type: string } & Record<string, unknown> {
  return format.type === "json_schema" ? { ...format, description: format.description ?? null, strict: format.strict ?? false } : format;
}

function isFormat(value: unknown): value is { type: string } & Record<string, unknown> {
  return typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string";
}
