import type { Logger } from "pino";
import { z } from "zod";
import type { TokenUsage } from "../../answer/answer-events.js";
import type { ConversationItem } from "../../continuity/conversations-api/conversations-api-store.js";
import type { ConversationsApi } from "../../continuity/conversations-api/conversations-api.js";
import type { StoredEntry } from "../../continuity/responses/response-store.js";
import type { StoredResponses } from "../../continuity/responses/stored-responses.js";
import { responseMetaSchema } from "../../dialects/responses/response-meta.js";
import type { ResponseObject } from "../../dialects/responses/response-object.js";
import type { StoredValue } from "../../dialects/responses/stored-value.js";
import { errorMessage } from "../../util/error-message.js";

/** A stored response of the Responses API, as continuity keeps it: its value is the dialect's (`stored-value.ts`). */
export type StoredResponse = StoredEntry<StoredValue>;

/**
 * A turn to store once its answer is whole: the response's identity and echo, its input, its
 * conversation. A schema, since a background response keeps it for the replica that may finish it.
 */
export const turnSchema = z.object({
  id: z.string(),
  principal: z.string(),
  workspace: z.string(),
  queryId: z.string(),
  meta: responseMetaSchema,
  input: z.array(z.looseObject({ id: z.string(), type: z.string() })),
  conversation: z.string().nullable(),
});
/** A turn to store once its answer is whole. */
export type Turn = z.infer<typeof turnSchema>;

/** What an encoder holds of a finished answer: the response object, the answer to replay, its usage. */
export interface FinishedAnswer {
  readonly finished: ResponseObject | undefined;
  readonly answer: StoredValue["answer"];
  readonly usage: TokenUsage | undefined;
}

/** A finished turn as a stored response holds it, or null for an answer not finished whole (nothing to continue). */
export function entryOf(turn: Turn, encoder: FinishedAnswer): StoredResponse | null {
  const { id, queryId, meta, input } = turn;
  const { finished, usage } = encoder;
  if (!finished || !usage) return null;
  const itemIds = finished.output.map((item) => item.id);
  const value = { response: finished, input, meta, answer: encoder.answer, usage };
  return { id, principal: turn.principal, workspace: turn.workspace, queryId, itemIds, value };
}

/**
 * How a Responses turn is kept (docs/responses-api.md#continuing-and-storing-responses): the
 * response, when `store`, as a stored response (`previous_response_id`, retrieval, `item_reference`s
 * to its output), and its input and output as its conversation's items (docs/responses-api.md#conversations).
 * Continuity keeps the records; this is what a Responses turn makes of them.
 */
export class ResponseTurns {
  constructor(
    private readonly stores: { stored: StoredResponses<StoredValue>; conversations: ConversationsApi; logger: Logger },
  ) {}

  /** Stores a finished turn (docs/architecture.md#redis-down-or-slow); resolves once written or after the stores' wait. Never rejects. */
  async store(turn: Turn, encoder: FinishedAnswer): Promise<void> {
    const { conversation, input } = turn;
    const { finished } = encoder;
    const threadTurn = conversation && finished ? this.appendTurn(conversation, [...input, ...finished.output]) : undefined;
    const entry = turn.meta.store ? entryOf(turn, encoder) : null;
    await Promise.all([entry && this.stores.stored.put(entry), threadTurn]);
  }

  /** Adds a turn's items to its conversation; a failure is logged (the answer is not lost for it). */
  private async appendTurn(conversationId: string, turnItems: readonly ConversationItem[]): Promise<void> {
    const { conversations, logger } = this.stores;
    try {
      const added = await conversations.append(conversationId, turnItems);
      if (!added) logger.warn({ conversationId }, "conversation gone before its turn was added");
    } catch (error) {
      logger.warn({ conversationId, err: { message: errorMessage(error) } }, "conversation turn could not be stored");
    }
  }
}
