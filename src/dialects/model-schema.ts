import { z } from "zod";

/**
 * OpenAI's model object, for `GET /v1/models`, with what each model supports in the fields of
 * LiteLLM's model info (`mode`, `supports_*`, `supported_openai_params`), the capability fields a
 * client or gateway reads (docs/chat-ui-tasks.md#what-v1models-says): every mode answers chat in
 * text, streamed or not, or as JSON validated against the caller's schema (not constrained
 * decoding: `structured_outputs: "validated"`, docs/structured-answers.md), and reads no images.
 */
export const modelSchema = z.object({
  id: z.string(),
  object: z.literal("model"),
  created: z.int(),
  owned_by: z.string(),
  mode: z.literal("chat"),
  supported_openai_params: z.array(z.string()),
  supports_function_calling: z.boolean(),
  supports_parallel_function_calling: z.boolean(),
  supports_tool_choice: z.boolean(),
  supports_response_schema: z.boolean(),
  /** How a JSON schema is followed: `validated` (the answer checked, and asked once more), never constrained decoding. */
  structured_outputs: z.literal("validated"),
  supports_vision: z.boolean(),
  supports_pdf_input: z.boolean(),
  supports_audio_input: z.boolean(),
  supports_native_streaming: z.boolean(),
});
/** One listed model. */
export type Model = z.infer<typeof modelSchema>;

/**
 * What every mode supports, the same for all: the parameters that change an answer (`stream`,
 * `stream_options`, `n`, `response_format`, and `tools` with a `tool_choice` forcing one function,
 * answered as extraction), JSON schemas (validated), and no tool calls of its own choosing, images,
 * files or audio. Parameters not listed are accepted and have no effect, or are refused when they
 * ask for what the workspace cannot do (docs/architecture/dialects.md#honest-capabilities).
 */
export const MODEL_CAPABILITIES = {
  mode: "chat",
  supported_openai_params: ["stream", "stream_options", "n", "response_format", "tools", "tool_choice"],
  supports_function_calling: false,
  supports_parallel_function_calling: false,
  supports_tool_choice: true,
  supports_response_schema: true,
  structured_outputs: "validated",
  supports_vision: false,
  supports_pdf_input: false,
  supports_audio_input: false,
  supports_native_streaming: true,
} as const satisfies Omit<Model, "id" | "object" | "created" | "owned_by">;
