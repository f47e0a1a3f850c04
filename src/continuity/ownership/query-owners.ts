import type { Logger } from "pino";
import { NotFoundError } from "../../errors/adapter-error.js";
import type { Clock } from "../../util/clock.js";
import { errorMessage } from "../../util/error-message.js";
import { writeBriefly } from "../../util/retry-briefly.js";
import { lookupOrUnavailable, type Owner, owned } from "../access.js";
import type { StoreWriting } from "../store-writing.js";
import type { QueryOwnerStore } from "./query-owner-store.js";

/** What the owners of queries need besides their store (a new query's record is waited for `writeWaitMs` before it is asked anyway). */
export interface QueryOwnersOptions extends StoreWriting {
  /** How long a query stays its owner's to continue by id after its last turn: the thread's lifetime (`CONVERSATION_TTL_SECONDS`). */
  ttlSeconds: number;
  logger: Logger;
  clock: Pick<Clock, "setTimeout" | "clearTimeout">;
}

/**
 * Whose each workspace query is (docs/governance.md#whose-query-it-is). When every caller reaches
 * the workspace with one shared credential (`WORKSPACE_API_KEY`, a gateway's key, the OAuth team
 * set-up), the workspace cannot tell them apart, and query ids are no secret (they are in
 * `chatcmpl-<id>`, `Service-Query-Id`, logs, the audit trail and spans): so the adapter records who
 * started each query it creates, and a `query_id` a caller names is continued only when it is the
 * caller's own. Continuations found for the caller (its thread memory, stored responses,
 * conversations) are its own already.
 */
export class QueryOwners {
  constructor(
    private readonly store: QueryOwnerStore,
    private readonly options: QueryOwnersOptions,
  ) {}

  /**
   * Refuses a query id the caller did not start, in this workspace: a 404, the same whether the
   * query is another's or unknown, so that nothing is learnt of others' queries. A 503 when the
   * store cannot answer (never "not found", never "yours").
   */
  async check(queryId: string, caller: Owner): Promise<void> {
    const lookup = { what: `The query '${queryId}'`, code: "query_owner_unavailable", store: "query owner" };
    const owner = await lookupOrUnavailable(() => this.store.get(queryId), lookup, this.options);
    if (owner && owned(owner, caller.principal, caller.workspace)) return;
    throw new NotFoundError(
      `No query '${queryId}' that this caller started is known in workspace '${caller.workspace}': a query_id continues only your own queries, ` +
        "for as long as their conversation is remembered",
      { param: "query_id", code: "query_not_found" },
    );
  }

  /**
   * Records `owner` as the owner of the queries about to be created or continued (their lifetime
   * starts over). Resolves once the first write was answered (or after `writeWaitMs`); a write that
   * failed is retried in the background, and one lost leaves the query unclaimed (its owner can
   * still continue it through the conversation, but not by its id).
   */
  record(queryIds: readonly string[], owner: Owner): Promise<void> {
    const { ttlSeconds, logger, clock, writeWaitMs, onWrite, wake } = this.options;
    const write = async () => {
      const claimed = await Promise.all(queryIds.map((queryId) => this.store.claim(queryId, owner, ttlSeconds)));
      // Unreachable through the check (a query id is continued only by its owner): said if it ever happens.
      if (claimed.includes(false)) logger.warn({ queryIds }, "a query another principal started was not claimed");
    };
    return writeBriefly(write, {
      clock,
      wake,
      waitMs: writeWaitMs,
      onOutcome: onWrite,
      onLost: (error) =>
        logger.warn({ queryIds, err: { message: errorMessage(error) } }, "query owner lost: the store did not take it; the query cannot be continued by its id"),
    });
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
