import { z } from "zod";
import { citedSourceSchema } from "../../core/source-record.js";

/** A `file_citation` annotation (docs/architecture/upstream.md#the-chat-completion-resource), spanning a citation marker in the content. */
export const fileCitationSchema = z.object({
  type: z.literal("file_citation"),
  file_citation: z.object({ filename: z.string() }),
  start_index: z.int().nullable(),
  end_index: z.int().nullable(),
});
/** An interface `file_citation` annotation. */
export type FileCitation = z.infer<typeof fileCitationSchema>;

/** OpenAI's chat `url_citation` annotation, spanning a citation marker in the content. */
export const urlCitationSchema = z.object({
  type: z.literal("url_citation"),
  url_citation: z.object({ url: z.string(), title: z.string(), start_index: z.int(), end_index: z.int() }),
});
/** A `url_citation` annotation. */
export type UrlCitation = z.infer<typeof urlCitationSchema>;

/** One annotation of a completion message, in the format chosen for the request. */
export const annotationSchema = z.union([fileCitationSchema, urlCitationSchema]);
/** One annotation of a completion message. */
export type ChatAnnotation = z.infer<typeof annotationSchema>;

/** Perplexity's `search_results` entry, which some chat UIs read beside `citations` (URLs). */
export const searchResultSchema = z.object({ title: z.string(), url: z.string(), snippet: z.string().optional() });
/** One search result. */
export type SearchResult = z.infer<typeof searchResultSchema>;

/** A source the answer drew on (docs/architecture/upstream.md#the-chat-completion-resource); `cited` says whether a marker points at it. */
export const completionSourceSchema = citedSourceSchema;
/** One source of a completion message. */
export type CompletionSource = z.infer<typeof completionSourceSchema>;

/** Token usage (docs/architecture/upstream.md#the-chat-completion-resource), with OpenAI's reasoning-token detail. */
export const usageSchema = z.object({
  prompt_tokens: z.int(),
  completion_tokens: z.int(),
  total_tokens: z.int(),
  completion_tokens_details: z.object({ reasoning_tokens: z.int() }).optional(),
});
/** Token usage of a completion. */
export type Usage = z.infer<typeof usageSchema>;

/** A function call of the answer: a forced function answered by extraction (docs/structured-answers.md#a-forced-function). */
export const toolCallSchema = z.object({
  id: z.string(),
  type: z.literal("function"),
  function: z.object({ name: z.string(), arguments: z.string() }),
});
/** One function call of a completion message. */
export type ToolCall = z.infer<typeof toolCallSchema>;

/** Why a choice ended: its text, or the forced function's call. */
export const finishReasonSchema = z.enum(["stop", "tool_calls"]);

/** The assistant message of a choice (docs/architecture/upstream.md#the-chat-completion-resource), OpenAI's fields plus the interface's. */
export const completionMessageSchema = z.object({
  role: z.literal("assistant"),
  /** Null when the answer is a function call (`tool_calls`). */
  content: z.string().nullable(),
  refusal: z.null(),
  reasoning_content: z.string().optional(),
  annotations: z.array(annotationSchema),
  sources: z.array(completionSourceSchema),
  tool_calls: z.array(toolCallSchema).optional(),
});
/** The assistant message of a choice. */
export type CompletionMessage = z.infer<typeof completionMessageSchema>;

/** A `chat.completion` (docs/architecture/upstream.md#the-chat-completion-resource). */
export const chatCompletionSchema = z.object({
  id: z.string(),
  object: z.literal("chat.completion"),
  created: z.int(),
  model: z.string(),
  choices: z.array(
    z.object({
      index: z.int(),
      message: completionMessageSchema,
      logprobs: z.null(),
      finish_reason: finishReasonSchema,
    }),
  ),
  usage: usageSchema,
  /** Perplexity's convention, read by some chat UIs: the sources' URLs, and their titles and snippets. */
  citations: z.array(z.string()).optional(),
  search_results: z.array(searchResultSchema).optional(),
});
/** A whole non-streamed response. */
export type ChatCompletion = z.infer<typeof chatCompletionSchema>;

/** The delta of one streamed choice. */
export const chunkDeltaSchema = z.object({
  role: z.literal("assistant").optional(),
  content: z.string().optional(),
  reasoning_content: z.string().optional(),
  annotations: z.array(annotationSchema).optional(),
  sources: z.array(completionSourceSchema).optional(),
  /** The forced function's call, whole in one delta once its arguments were validated. */
  tool_calls: z.array(toolCallSchema.extend({ index: z.int() })).optional(),
});
/** The delta of one streamed choice. */
export type ChunkDelta = z.infer<typeof chunkDeltaSchema>;

/** A `chat.completion.chunk`: one SSE event of a streamed response. */
export const chatCompletionChunkSchema = z.object({
  id: z.string(),
  object: z.literal("chat.completion.chunk"),
  created: z.int(),
  model: z.string(),
  choices: z.array(
    z.object({
      index: z.int(),
      delta: chunkDeltaSchema,
      logprobs: z.null(),
      finish_reason: finishReasonSchema.nullable(),
    }),
  ),
  usage: usageSchema.nullable().optional(),
  citations: z.array(z.string()).optional(),
  search_results: z.array(searchResultSchema).optional(),
  /** Open WebUI's `source` event (one per source), forwarded by its backend to the chat as a source chip. */
  event: z.object({ type: z.literal("source"), data: z.record(z.string(), z.unknown()) }).optional(),
});
/** One streamed chunk. */
export type ChatCompletionChunk = z.infer<typeof chatCompletionChunkSchema>;
