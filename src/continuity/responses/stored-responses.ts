import type { Logger } from "pino";
import type { Clock } from "../../util/clock.js";
import { writeBriefly } from "../../util/retry-briefly.js";
import { lookupOrUnavailable, owned } from "../access.js";
import type { StoreWriting } from "../store-writing.js";
import type { ResponseStore, StoredEntry } from "./response-store.js";
import { errorMessage } from "../../util/error-message.js";

/** What stored responses are built from: their store, their lifetime, and how their writes are waited for and reported. */
export interface StoredResponsesOptions<Value> extends StoreWriting {
  store: ResponseStore<Value>;
  clock: Clock;
  logger: Logger;
  /** `RESPONSES_TTL_SECONDS`. */
  ttlSeconds: number;
}

/**
 * Stored responses (docs/architecture.md#redis-down-or-slow), whatever their dialect makes of
 * them: who may see one (`owned`), the one that produced an output item, and the brief write that
 * ends an answer. Entries read back from Redis are parsed (`storedEntrySchema`, with the value
 * schema the dialect gives), never cast. A store that fails is not "not found": a continuation
 * answered as a fresh chain would lose its context, so it is a 503 to retry. What a stored
 * response holds and how a turn becomes one are the Responses API's (`http/responses/`).
 */
export class StoredResponses<Value> {
  constructor(private readonly options: StoredResponsesOptions<Value>) {}

  /** A stored response this caller may see (`owned`), or null (the route answers that as its 404); a 503 when the store does not answer. */
  async visible(id: string, principal: string, workspace: string | undefined): Promise<StoredEntry<Value> | null> {
    const found = await this.lookup(() => this.options.store.get(id), `'${id}'`);
    return found && owned(found, principal, workspace) ? found : null;
  }

  /** The stored response that produced the output item `itemId`, if this caller may see it (`owned`), or null; a 503 when the store does not answer. */
  async producing(itemId: string, principal: string, workspace: string | undefined): Promise<StoredEntry<Value> | null> {
    const found = await this.lookup(() => this.options.store.findByItem(itemId), `of item '${itemId}'`);
    return found && owned(found, principal, workspace) ? found : null;
  }

  /** Stores a finished response, retried briefly in the background; resolves once written or after the wait (never rejects). */
  put(entry: StoredEntry<Value>): Promise<void> {
    const { options } = this;
    return writeBriefly(() => options.store.put(entry, options.ttlSeconds), {
      clock: options.clock,
      wake: options.wake,
      waitMs: options.writeWaitMs,
      onOutcome: options.onWrite,
      onLost: (error) =>
        options.logger.warn({ responseId: entry.id, queryId: entry.queryId, err: { message: errorMessage(error) } }, "response could not be stored"),
    });
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
