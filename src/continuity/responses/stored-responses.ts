import type { Logger } from "pino";
import { z } from "zod";
import type { TokenUsage } from "../../answer/answer-events.js";
import type { StoredInputItem } from "../../dialects/responses/read-input.js";
import { responseMetaSchema } from "../../dialects/responses/response-meta.js";
import type { ResponseObject } from "../../dialects/responses/response-object.js";
import { RESPONSE_ID } from "../../dialects/responses/response-request.js";
import type { StoredValue } from "../../dialects/responses/stored-value.js";
import { NotFoundError } from "../../errors/adapter-error.js";
import type { Clock } from "../../util/clock.js";
import { type RetryOutcome, writeBriefly } from "../../util/retry-briefly.js";
import { lookupOrUnavailable, owned } from "../access.js";
import type { ConversationItem, ConversationsApiStore } from "../conversations-api/conversations-api-store.js";
import type { ResponseStore, StoredEntry } from "./response-store.js";
import { errorMessage } from "../../util/error-message.js";

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

/** What stored responses are built from. */
export interface StoredResponsesOptions {
  store: ResponseStore;
  clock: Clock;
  logger: Logger;
  /** `RESPONSES_TTL_SECONDS`. */
  ttlSeconds: number;
  /** How long an answer waits for its response's write before it ends (`STORE_WRITE_WAIT_MS`). */
  writeWaitMs: number;
  /** How each response's write went (metrics). */
  onStored?: ((outcome: RetryOutcome) => void) | undefined;
  /** A request was refused because the store could not answer (metrics). */
  onRefused?: (() => void) | undefined;
  /** Resolves when the store answers again after an outage: a failed write's cue to retry at once. */
  wake?: (() => Promise<void>) | undefined;
  /** The Conversations API's items: a turn of a conversation adds its input and output there. */
  conversationItems: Pick<ConversationsApiStore, "append">;
  /** `CONVERSATION_TTL_SECONDS`. */
  conversationTtlSeconds: number;
}

/**
 * The Responses API's stored responses (docs/architecture.md#redis-down-or-slow), beside the
 * thread memory: who may see one (`owned`), the items `item_reference` names, and the brief write
 * that ends an answer. Entries read back from Redis are parsed (`storedEntrySchema`), never cast.
 * A store that fails is not "not found": a continuation answered as a fresh chain would lose its
 * context, so it is a 503 to retry.
 */
export class StoredResponses {
  constructor(private readonly options: StoredResponsesOptions) {}

  /** A stored response this caller may see (`owned`); a 404 otherwise. */
  async visible(id: string, principal: string, workspace: string | undefined, param: string): Promise<StoredEntry> {
    const found = RESPONSE_ID.test(id) ? await this.lookup(() => this.options.store.get(id), `'${id}'`) : null;
    if (!found || !owned(found, principal, workspace)) {
      throw new NotFoundError(`No response with id '${id}' was found`, { param, code: "response_not_found" });
    }
    return found;
  }

  /**
   * `item_reference`s resolved to the stored items they name (an unknown or foreign one is a 404:
   * silently dropping part of the conversation would alter it), and the last response referenced.
   */
  async resolveReferences(
    items: StoredInputItem[],
    principal: string,
    workspace: string,
  ): Promise<{ resolved: StoredInputItem[]; lastReferenced: StoredEntry | null }> {
    let lastReferenced: StoredEntry | null = null;
    const resolved: StoredInputItem[] = [];
    for (const [index, item] of items.entries()) {
      if (item.type !== "item_reference") {
        resolved.push(item);
        continue;
      }
      const found = await this.lookup(() => this.options.store.findByItem(item.id), `of item '${item.id}'`);
      const stored = found && owned(found, principal, workspace) ? found : null;
      const output = stored?.value.response.output.find((candidate) => candidate.id === item.id);
      if (!stored || !output) {
        throw new NotFoundError(`No stored item with id '${item.id}' was found (input.${index})`, { param: "input", code: "item_not_found" });
      }
      lastReferenced = stored;
      resolved.push(output);
    }
    return { resolved, lastReferenced };
  }

  /** Stores a finished response, retried briefly in the background; resolves once written or after the wait (never rejects). */
  put(entry: StoredEntry): Promise<void> {
    const { options } = this;
    return writeBriefly(() => options.store.put(entry, options.ttlSeconds), {
      clock: options.clock,
      wake: options.wake,
      waitMs: options.writeWaitMs,
      onOutcome: options.onStored,
      onLost: (error) =>
        options.logger.warn({ responseId: entry.id, queryId: entry.queryId, err: { message: errorMessage(error) } }, "response could not be stored"),
    });
  }

  /**
   * Stores a finished turn (docs/architecture.md#redis-down-or-slow): the response, when `store`,
   * for `previous_response_id` and retrieval; its input and output as its conversation's items.
   * Never rejects.
   */
  async storeTurn(turn: Turn, encoder: FinishedAnswer): Promise<void> {
    const { id, queryId, meta, input } = turn;
    const { finished, usage } = encoder;
    // The turn's input and output become the conversation's items (docs/responses-api.md#conversations).
    const { conversation } = turn;
    const threadTurn = conversation && finished ? this.appendTurn(conversation, [...input, ...finished.output]) : undefined;
    if (!meta.store || !finished || !usage) {
      await threadTurn;
      return;
    }
    const itemIds = finished.output.map((item) => item.id);
    const value = { response: finished, input, meta, answer: encoder.answer, usage };
    const entry = { id, principal: turn.principal, workspace: turn.workspace, queryId, itemIds, value };
    await Promise.all([this.put(entry), threadTurn]);
  }

  /** Adds a turn's items to its conversation; a failure is logged (the answer is not lost for it). */
  private async appendTurn(conversationId: string, turnItems: object[]): Promise<void> {
    try {
      const { conversationItems, conversationTtlSeconds } = this.options;
      const added = await conversationItems.append(conversationId, turnItems as ConversationItem[], conversationTtlSeconds);
      if (!added) this.options.logger.warn({ conversationId }, "conversation gone before its turn was added");
    } catch (error) {
      this.options.logger.warn({ conversationId, err: { message: errorMessage(error) } }, "conversation turn could not be stored");
    }
  }

  /** Deletes a stored response. */
  delete(id: string): Promise<boolean> {
    return this.options.store.delete(id);
  }

  /** A lookup in the store; its failure refuses the request (a 503, `lookupOrUnavailable`). */
  private lookup<T>(find: () => Promise<T>, what: string): Promise<T> {
    const lookup = { what: `The stored response ${what}`, code: "response_store_unavailable", store: "response store" };
    return lookupOrUnavailable(find, lookup, { logger: this.options.logger, onRefused: this.options.onRefused });
  }
}
