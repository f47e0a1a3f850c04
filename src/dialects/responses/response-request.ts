import { z } from "zod";
import { modelSchema } from "../../core/model.js";

/** A content part of an input message: `input_text` and `output_text` are read; others are kept as sent. */
export const inputPartSchema = z.looseObject({ type: z.string(), text: z.string().optional() });

/** What an assistant message is (Open Responses 2026-04-24, OpenAI): commentary on the way, or the final answer. */
export const messagePhaseSchema = z.enum(["commentary", "final_answer"]);

/**
 * One item of `input`. Messages (`type` may be omitted) with string or part content (an assistant
 * message's `phase` kept as sent), `item_reference`s to earlier output, `compaction` items
 * (docs/responses-api.md#compaction), a tool's results (`function_call_output`: docs/responses-api.md#a-tools-result-handed-back),
 * and any other item type (reasoning, function calls…), which is accepted, kept and not sent upstream.
 */
export const inputItemSchema = z.looseObject({
  type: z.string().optional(),
  id: z.string().optional(),
  role: z.string().optional(),
  content: z.union([z.string(), z.array(inputPartSchema)]).optional(),
  phase: messagePhaseSchema.optional(),
});
/** One input item as sent. */
export type InputItem = z.infer<typeof inputItemSchema>;

/** Ids of stored responses: `resp_` and letters, digits, `-` or `_`. */
export const RESPONSE_ID = /^resp_[A-Za-z0-9_-]{1,120}$/;

/** Ids of conversations: `conv_` and letters, digits, `-` or `_`. */
export const CONVERSATION_ID = /^conv_[A-Za-z0-9_-]{1,120}$/;

/** `conversation` on `POST /v1/responses` (docs/responses-api.md#conversations): a conversation id, or `{id}`. */
export const conversationParamSchema = z.union([
  z.string().regex(CONVERSATION_ID, "String should be a conversation id ('conv_…')"),
  z.looseObject({ id: z.string().regex(CONVERSATION_ID, "String should be a conversation id ('conv_…')") }),
]);

/** `metadata` of a response or a conversation: at most 16 keys of 64 characters, values of 512. */
export const metadataSchema = z
  .record(z.string().max(64, "Metadata keys are at most 64 characters"), z.string().max(512, "Metadata values are at most 512 characters"))
  .refine((value) => Object.keys(value).length <= 16, "Metadata holds at most 16 keys");

/**
 * The body of `POST /v1/responses`: OpenAI's fields that apply here are read; `include`, `tools`,
 * `reasoning`, `max_output_tokens`, `temperature`, the penalties, `service_tier`,
 * `prompt_cache_key`… and every unknown field are accepted, echoed where the response object has a
 * place for them, and otherwise ignored (the upstream has no place for them).
 */
export function responseRequestSchema(options: { maxMessages: number }) {
  return z.looseObject({
    model: modelSchema,
    input: z.union([z.string().min(1), z.array(inputItemSchema).min(1).max(options.maxMessages)]),
    instructions: z.string().nullish(),
    previous_response_id: z.string().regex(RESPONSE_ID, "String should be a response id ('resp_…')").nullish(),
    store: z.boolean().nullish(),
    stream: z.boolean().nullish(),
    /** Continues this conversation's workspace query and adds the turn to its items (not with `previous_response_id`). */
    conversation: conversationParamSchema.nullish(),
    /** Answer at once and run in the background (needs `store`; docs/responses-api.md#background-mode). */
    background: z.boolean().nullish(),
    metadata: metadataSchema.nullish(),
    temperature: z.number().nullish(),
    top_p: z.number().nullish(),
    max_output_tokens: z.int().nullish(),
    parallel_tool_calls: z.boolean().nullish(),
    user: z.string().nullish(),
    truncation: z.enum(["auto", "disabled"]).nullish(),
    tools: z.array(z.looseObject({})).nullish(),
    tool_choice: z.unknown().optional(),
    reasoning: z.looseObject({}).nullish(),
    text: z.looseObject({}).nullish(),
    // Echoed on the response object (Open Responses requires each there); the workspace has no place for them.
    presence_penalty: z.number().nullish(),
    frequency_penalty: z.number().nullish(),
    top_logprobs: z.int().min(0).max(20).nullish(),
    service_tier: z.string().nullish(),
    max_tool_calls: z.int().min(0).nullish(),
    safety_identifier: z.string().max(64).nullish(),
    prompt_cache_key: z.string().nullish(),
    /** Escape hatch (docs/upstream-assumptions.md#create): keys merged into the upstream create body. */
    query: z.record(z.string(), z.unknown()).nullish(),
  });
}

/** A validated `POST /v1/responses` body. */
export type ResponseRequest = z.infer<ReturnType<typeof responseRequestSchema>>;
