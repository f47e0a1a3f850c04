import { z } from "zod";
import { citedSourceSchema } from "../../core/source-record.js";
import type { SseFrame } from "../../core/sse-frame.js";
import type { DocumentLinkSigning } from "../../answer/source-links.js";
import { ResponseStreamEncoder } from "./response-stream-encoder.js";
import { responseMetaSchema } from "./response-meta.js";
import { responseObjectSchema } from "./response-object.js";

/**
 * What a stored response keeps beside its object: its input (for `input_items` and later
 * `item_reference`s), its echo, and the answer to replay its events from. Read back from the store
 * through this schema: a value that does not parse is no stored response.
 */
export const storedValueSchema = z.object({
  response: responseObjectSchema,
  input: z.array(z.looseObject({ id: z.string(), type: z.string() })),
  meta: responseMetaSchema,
  answer: z.object({
    reasoning: z.string(),
    text: z.string(),
    citations: z.array(z.object({ source: z.int(), filename: z.string(), start: z.int(), end: z.int() })),
    sources: z.array(citedSourceSchema),
  }),
  usage: z.object({ promptTokens: z.int(), completionTokens: z.int(), reasoningTokens: z.int() }),
});
/** A stored response's value. */
export type StoredValue = z.infer<typeof storedValueSchema>;

/** A stored response's events, as its stream sent them, from its answer (one delta per item). */
export function replay(value: StoredValue, signing?: DocumentLinkSigning): SseFrame[] {
  const encoder = new ResponseStreamEncoder(value.meta, () => value.response.completed_at ?? value.meta.createdAt, signing);
  const { reasoning, text, citations, sources } = value.answer;
  return [
    ...encoder.open(),
    ...(reasoning ? encoder.encode({ type: "reasoning", choice: 0, text: reasoning, steps: [reasoning] }) : []),
    ...(text ? encoder.encode({ type: "text", choice: 0, text }) : []),
    ...encoder.encode({ type: "cited", choice: 0, citations, sources }),
    ...encoder.close(value.usage),
  ];
}
