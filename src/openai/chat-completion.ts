import { z } from "zod";

/** A `file_citation` annotation (§ File citation), spanning a citation marker in the content. */
export const fileCitationSchema = z.object({
  type: z.literal("file_citation"),
  file_citation: z.object({ filename: z.string() }),
  start_index: z.int().nullable(),
  end_index: z.int().nullable(),
});
/** One annotation of a completion message. */
export type FileCitation = z.infer<typeof fileCitationSchema>;

/** A source the answer drew on (§ Completion source); `cited` says whether a marker points at it. */
export const completionSourceSchema = z.object({
  filename: z.string().nullable(),
  title: z.string().nullable(),
  page: z.int().nullable(),
  snippet: z.string().nullable(),
  cited: z.boolean(),
});
/** One source of a completion message. */
export type CompletionSource = z.infer<typeof completionSourceSchema>;

/** Token usage (§ Usage), with OpenAI's reasoning-token detail. */
export const usageSchema = z.object({
  prompt_tokens: z.int(),
  completion_tokens: z.int(),
  total_tokens: z.int(),
  completion_tokens_details: z.object({ reasoning_tokens: z.int() }).optional(),
});
/** Token usage of a completion. */
export type Usage = z.infer<typeof usageSchema>;

/** The assistant message of a choice (§ Completion message), OpenAI's fields plus the interface's. */
export const completionMessageSchema = z.object({
  role: z.literal("assistant"),
  content: z.string(),
  refusal: z.null(),
  reasoning_content: z.string().optional(),
  annotations: z.array(fileCitationSchema),
  sources: z.array(completionSourceSchema),
});
/** The assistant message of a choice. */
export type CompletionMessage = z.infer<typeof completionMessageSchema>;

/** A `chat.completion` (§ Chat completion). */
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
      finish_reason: z.literal("stop"),
    }),
  ),
  usage: usageSchema,
});
/** A whole non-streamed response. */
export type ChatCompletion = z.infer<typeof chatCompletionSchema>;

/** The delta of one streamed choice. */
export const chunkDeltaSchema = z.object({
  role: z.literal("assistant").optional(),
  content: z.string().optional(),
  reasoning_content: z.string().optional(),
  annotations: z.array(fileCitationSchema).optional(),
  sources: z.array(completionSourceSchema).optional(),
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
      finish_reason: z.literal("stop").nullable(),
    }),
  ),
  usage: usageSchema.nullable().optional(),
});
/** One streamed chunk. */
export type ChatCompletionChunk = z.infer<typeof chatCompletionChunkSchema>;

/** The body of every error response: the interface's `detail` and OpenAI's `error`. */
export const errorBodySchema = z.object({
  detail: z.union([
    z.string(),
    z.array(
      z.object({
        loc: z.array(z.union([z.string(), z.int()])),
        msg: z.string(),
        type: z.string(),
        input: z.unknown().optional(),
        ctx: z.record(z.string(), z.unknown()).optional(),
      }),
    ),
  ]),
  error: z.object({
    message: z.string(),
    type: z.string(),
    param: z.string().nullable(),
    code: z.string().nullable(),
  }),
});
/** An error response body. */
export type ErrorBody = z.infer<typeof errorBodySchema>;

/** OpenAI's model object, for `GET /v1/models`. */
export const modelSchema = z.object({
  id: z.string(),
  object: z.literal("model"),
  created: z.int(),
  owned_by: z.string(),
});
/** One listed model. */
export type Model = z.infer<typeof modelSchema>;
