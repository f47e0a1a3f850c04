import { z } from "zod";
import { modelSchema } from "../../core/model.js";
import type { StoredInputItem } from "./read-input.js";
import { inputItemSchema, RESPONSE_ID, responseRequestSchema } from "./response-request.js";
import type { ResponseUsage } from "./response-object.js";

/**
 * The body of `POST /v1/responses/compact` (docs/responses-api.md#compaction): `model` (required,
 * as in Open Responses), the conversation as `input` and/or `previous_response_id`, and
 * `instructions` and `prompt_cache_key`, accepted and not used. Unknown fields are accepted.
 */
export function compactRequestSchema(options: { maxMessages: number }) {
  return z.looseObject({
    model: modelSchema,
    input: z.union([z.string().min(1), z.array(inputItemSchema).max(options.maxMessages)]).nullish(),
    previous_response_id: z.string().regex(RESPONSE_ID, "String should be a response id ('resp_…')").nullish(),
    instructions: z.string().nullish(),
    prompt_cache_key: z.string().nullish(),
  });
}
/** A validated compact body. */
export type CompactRequest = z.infer<ReturnType<typeof compactRequestSchema>>;

/**
 * The body of `POST /v1/responses/input_tokens` (docs/responses-api.md#counting-input-tokens): a
 * response's body, whose `model` may be left out (counting does not depend on the mode).
 */
export function inputTokensRequestSchema(options: { maxMessages: number }) {
  return responseRequestSchema(options).extend({ model: modelSchema.default("ask") });
}

/** The content of a compaction that carries no workspace thread (the workspace never answered that conversation). */
export const NO_THREAD = "wst_none";

/** A compaction item (Open Responses `CompactionBody`): its content names the workspace thread, never its query id. */
export interface CompactionItem {
  type: "compaction";
  id: string;
  encrypted_content: string;
}

/** The compacted response (Open Responses `CompactResource`). */
export interface CompactedResponse {
  id: string;
  object: "response.compaction";
  created_at: number;
  output: (StoredInputItem | CompactionItem)[];
  usage: ResponseUsage;
}

/**
 * A compacted conversation, as OpenAI's compaction returns one: the user's messages kept as they
 * were, then one compaction item standing for everything else (the assistant's answers, tool calls,
 * reasoning), whose content is the handle of the workspace thread that holds them. `inputTokens`
 * are the conversation's, counted as `usage` counts; nothing is generated.
 */
export function compactedResponse(
  id: string,
  createdAt: number,
  items: readonly StoredInputItem[],
  compaction: CompactionItem,
  inputTokens: number,
): CompactedResponse {
  const kept = items.filter((item) => item.type === "message" && item.role === "user");
  return {
    id,
    object: "response.compaction",
    created_at: createdAt,
    output: [...kept, compaction],
    usage: {
      input_tokens: inputTokens,
      input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      output_tokens: 0,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: inputTokens,
    },
  };
}
