import type { Logger } from "pino";
import { ContinuationUnavailableError } from "../errors/adapter-error.js";
import { errorMessage } from "../util/error-message.js";

/** Who a stored record belongs to: a hash of the credential that made it, and its workspace. */
export interface Owner {
  principal: string;
  workspace: string;
}

/**
 * The one rule for who may see a stored record (a response, a background response, a conversation):
 * the credential that made it, in the workspace the request names, or in any when it names none
 * (docs/responses-api.md). Anyone else is told there is no such record.
 */
export function owned(record: Owner, principal: string, workspace: string | undefined): boolean {
  return record.principal === principal && (workspace === undefined || record.workspace === workspace);
}

/** Where a refused lookup is told: the log, and a metric. */
export interface RefusalReport {
  logger: Logger;
  /** A request was refused because the store could not answer (metrics). */
  onRefused?: (() => void) | undefined;
}

/** What a lookup is of, for its refusal: the record's name in the message, the error's code, the store's name in the log. */
export interface Lookup {
  /** Names the record in the 503's message: `The stored response 'resp_…'`. */
  what: string;
  /** The 503's `code` (`response_store_unavailable`). */
  code: string;
  /** The store, in the log line: `response store lookup failed`. */
  store: string;
}

/**
 * A lookup in a continuity store whose failure refuses the request (docs/architecture.md#redis-down-or-slow):
 * a store that does not answer is never "not found", since a continuation answered as a fresh one
 * would lose its context. The failure is logged, counted, and thrown as a 503 to retry
 * (`ContinuationUnavailableError`).
 */
export async function lookupOrUnavailable<T>(find: () => Promise<T>, lookup: Lookup, report: RefusalReport): Promise<T> {
  try {
    return await find();
  } catch (error) {
    report.logger.warn({ err: { message: errorMessage(error) } }, `${lookup.store} lookup failed: the request is refused`);
    report.onRefused?.();
    throw new ContinuationUnavailableError(lookup.what, lookup.code, error);
  }
}
