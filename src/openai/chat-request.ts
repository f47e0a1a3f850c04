import { z } from "zod";
import { MODES } from "../config/config.js";

/** `<workspace>/<mode>` or a bare mode; the workspace part is a safe id (see `workspace-id.ts`). */
export const MODEL_PATTERN = /^(?:([A-Za-z0-9][A-Za-z0-9._:-]{0,127})\/)?(ask|reason|build)$/;

/** Query ids the adapter forwards: a safe, URL-friendly set (ids it creates are UUIDs). */
export const QUERY_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** A chat message as the interface describes it (§ Chat message): role plus string/parts/null content. */
export const chatMessageSchema = z.looseObject({
  role: z.string(),
  content: z.union([z.string(), z.array(z.looseObject({})), z.null()]).optional(),
});

/** One chat message of a request. */
export type ChatMessage = z.infer<typeof chatMessageSchema>;

/**
 * The request body of `POST /v1/chat/completions` (§ Chat completion request). Additional
 * properties are accepted, as the interface says, so clients may send temperature, tools, user…
 */
export function chatCompletionRequestSchema(options: { maxChoices: number; maxMessages: number }) {
  return z.looseObject({
    model: z.string().check((context) => {
      if (!MODEL_PATTERN.test(context.value)) {
        context.issues.push({
          code: "custom",
          input: context.value,
          message: `Input should be ${MODES.map((mode) => `'${mode}'`).join(", ")} or '<workspace>/<mode>'`,
          params: { type: "literal_error", ctx: { expected: "'ask', 'reason' or 'build'" } },
        });
      }
    }),
    messages: z.array(chatMessageSchema).min(1).max(options.maxMessages),
    stream: z.boolean().nullish(),
    n: z.int().min(1).max(options.maxChoices).nullish(),
    stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
    /** Continue this upstream query (issue 4: an explicit key wins over conversation matching). */
    query_id: z.string().regex(QUERY_ID, "String should be a query id (letters, digits, '._:-', at most 128)").nullish(),
    /** Escape hatch (DESIGN.md, Contract item 1): keys merged into the upstream create body. */
    query: z.record(z.string(), z.unknown()).nullish(),
  });
}

/** A validated chat completion request. */
export type ChatCompletionRequest = z.infer<ReturnType<typeof chatCompletionRequestSchema>>;
