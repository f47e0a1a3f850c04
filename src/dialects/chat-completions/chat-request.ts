import { z } from "zod";
import { ID_MESSAGE, ID_PATTERN } from "../../core/ids.js";
import { modelSchema } from "../../core/model.js";

/** A chat message as the interface describes it (docs/architecture/upstream.md#the-chat-completion-resource): role plus string/parts/null content. */
export const chatMessageSchema = z.looseObject({
  role: z.string(),
  content: z.union([z.string(), z.array(z.looseObject({})), z.null()]).optional(),
});

/** One chat message of a request. */
export type ChatMessage = z.infer<typeof chatMessageSchema>;

/**
 * The request body of `POST /v1/chat/completions` (docs/architecture/upstream.md#the-chat-completion-resource). Additional
 * properties are accepted, as the interface says, so clients may send temperature, tools, user…
 */
export function chatCompletionRequestSchema(options: { maxChoices: number; maxMessages: number }) {
  return z.looseObject({
    model: modelSchema,
    messages: z.array(chatMessageSchema).min(1).max(options.maxMessages),
    stream: z.boolean().nullish(),
    n: z.int().min(1).max(options.maxChoices).nullish(),
    stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
    /** Continue this upstream query (an explicit key wins over conversation matching). */
    query_id: z.string().regex(ID_PATTERN, ID_MESSAGE).nullish(),
    /** Escape hatch (docs/upstream-assumptions.md#create): keys merged into the upstream create body. */
    query: z.record(z.string(), z.unknown()).nullish(),
  });
}

/** A validated chat completion request. */
export type ChatCompletionRequest = z.infer<ReturnType<typeof chatCompletionRequestSchema>>;
