import { z } from "zod";
import { citedSourceSchema } from "../../core/source-record.js";

/**
 * A citation in an answer (the Responses API's own `file_citation`): `index` is the code-point
 * offset of the marker's start in the text (docs/upstream-assumptions.md#sources-and-citations),
 * `file_id` stable per source. What else is known of the source rides along as extra keys, which
 * strict clients' schemas strip.
 */
export const fileCitationSchema = z.object({
  type: z.literal("file_citation"),
  file_id: z.string(),
  filename: z.string(),
  index: z.int(),
  title: z.string().optional(),
  page: z.int().optional(),
  snippet: z.string().optional(),
});
/** One `file_citation` annotation. */
export type ResponseFileCitation = z.infer<typeof fileCitationSchema>;

/**
 * A citation as a `url_citation` (the default: docs/citations.md#the-responses-api), the one
 * annotation of the Open Responses specification and one every Responses client keeps: `url` is the
 * source's link (`answer/source-links.ts`), `title` its title (or file name), and `start_index` /
 * `end_index` span the marker in code points, the end exclusive, as chat's `url_citation` does.
 */
export const urlCitationSchema = z.object({
  type: z.literal("url_citation"),
  url: z.string(),
  title: z.string(),
  start_index: z.int(),
  end_index: z.int(),
});
/** One `url_citation` annotation. */
export type ResponseUrlCitation = z.infer<typeof urlCitationSchema>;

/** A citation annotation, in the format the response was asked in. */
export type ResponseAnnotation = ResponseFileCitation | ResponseUrlCitation;

/** The text part of an assistant message. */
export const outputTextSchema = z.object({
  type: z.literal("output_text"),
  text: z.string(),
  annotations: z.array(z.union([urlCitationSchema, fileCitationSchema])),
  logprobs: z.array(z.unknown()),
});
/** One output text part. */
export type OutputText = z.infer<typeof outputTextSchema>;

/** The answer as an assistant message item. */
export const outputMessageSchema = z.object({
  type: z.literal("message"),
  id: z.string(),
  status: z.enum(["in_progress", "completed", "incomplete"]),
  role: z.literal("assistant"),
  content: z.array(outputTextSchema),
  /** The answer is the final answer (Open Responses' `phase`); absent in a response stored before it was sent. */
  phase: z.literal("final_answer").optional(),
});
/** The assistant message item. */
export type OutputMessage = z.infer<typeof outputMessageSchema>;

/** The query's steps as a reasoning item whose summary is their text (docs/upstream-assumptions.md#steps). */
export const reasoningItemSchema = z.object({
  type: z.literal("reasoning"),
  id: z.string(),
  summary: z.array(z.object({ type: z.literal("summary_text"), text: z.string() })),
  status: z.enum(["in_progress", "completed", "incomplete"]).optional(),
});
/** The reasoning item. */
export type ReasoningItem = z.infer<typeof reasoningItemSchema>;

/**
 * A forced function answered by extraction (docs/structured-answers.md#a-forced-function): the
 * call whose `arguments` are the validated JSON; the sources ride beside it (no content for
 * annotations to point into), as chat's `message.sources` do.
 */
export const functionCallItemSchema = z.object({
  type: z.literal("function_call"),
  id: z.string(),
  call_id: z.string(),
  name: z.string(),
  arguments: z.string(),
  status: z.enum(["in_progress", "completed", "incomplete"]),
  sources: z.array(citedSourceSchema),
});
/** The function call item. */
export type FunctionCallItem = z.infer<typeof functionCallItemSchema>;

/** An output item of a response. */
export type OutputItem = OutputMessage | ReasoningItem | FunctionCallItem;

/** Token usage as the Responses API reports it (docs/upstream-assumptions.md#usage). */
export const responseUsageSchema = z.object({
  input_tokens: z.int(),
  input_tokens_details: z.object({ cached_tokens: z.int(), cache_write_tokens: z.int() }),
  output_tokens: z.int(),
  output_tokens_details: z.object({ reasoning_tokens: z.int() }),
  total_tokens: z.int(),
});
/** Response usage. */
export type ResponseUsage = z.infer<typeof responseUsageSchema>;

/**
 * The response object, with every field OpenAI's schema and Open Responses' `ResponseResource`
 * require. The fields added since responses were first stored have defaults: an object stored
 * before them reads back whole.
 */
export const responseObjectSchema = z.object({
  id: z.string(),
  object: z.literal("response"),
  created_at: z.int(),
  status: z.enum(["completed", "failed", "in_progress", "cancelled", "queued", "incomplete"]),
  completed_at: z.int().nullable(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  incomplete_details: z.null(),
  instructions: z.string().nullable(),
  max_output_tokens: z.int().nullable(),
  model: z.string(),
  output: z.array(z.union([outputMessageSchema, reasoningItemSchema, functionCallItemSchema])),
  parallel_tool_calls: z.boolean(),
  previous_response_id: z.string().nullable(),
  reasoning: z.object({ effort: z.string().nullable(), summary: z.string().nullable() }),
  store: z.boolean(),
  temperature: z.number().nullable(),
  /** `{type: "text"}`, or the JSON format a structured answer was asked in, as sent. */
  text: z.object({ format: z.looseObject({ type: z.string() }) }),
  tool_choice: z.unknown(),
  tools: z.array(z.unknown()),
  top_p: z.number().nullable(),
  truncation: z.enum(["auto", "disabled"]),
  /** Null until the response completes. */
  usage: responseUsageSchema.nullable().default(null),
  /** Echoed when the request gave one. */
  user: z.string().optional(),
  metadata: z.record(z.string(), z.string()),
  /** Whether it ran in the background. */
  background: z.boolean().default(false),
  // The echoed settings (`echoedSettings`), defaulted alike in an object stored before them.
  presence_penalty: z.number().default(0),
  frequency_penalty: z.number().default(0),
  top_logprobs: z.int().default(0),
  service_tier: z.string().default("default"),
  max_tool_calls: z.int().nullable().default(null),
  safety_identifier: z.string().nullable().default(null),
  prompt_cache_key: z.string().nullable().default(null),
  /** The conversation it belongs to, when the request named one. */
  conversation: z.object({ id: z.string() }).optional(),
});
/** A response object. */
export type ResponseObject = z.infer<typeof responseObjectSchema>;
