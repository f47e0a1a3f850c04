import { GatewayTimeoutError, UpstreamError } from "../errors/adapter-error.js";
import type { UpstreamQuery } from "./query-schemas.js";
import type { Caller, WorkspaceClient } from "./workspace-client.js";

/**
 * `POST /queries` with a client-chosen id (DESIGN.md, Contract item 2). When the answer is lost
 * (connection broke, 5xx, timeout), the query may exist anyway; repeating the create with the same
 * id would start a second turn of it, so the adapter first looks for the id in the list and
 * carries on with what it finds. Only when it is not there is the original error reported.
 */
export async function createQuery(
  client: WorkspaceClient,
  caller: Caller,
  body: Record<string, unknown> & { id: string },
  options: { maxListPages: number; signal: AbortSignal },
): Promise<UpstreamQuery> {
  try {
    return await client.createQuery(caller, body, options.signal);
  } catch (error) {
    const outcomeUnknown = error instanceof UpstreamError || error instanceof GatewayTimeoutError;
    if (!outcomeUnknown || options.signal.aborted) throw error;
    const found = await findQuery(client, caller, body.id, options).catch(() => null);
    if (found) return found;
    throw error;
  }
}

/** Looks for a query id in the first `maxListPages` pages of `GET /queries` (§ List rules). */
export async function findQuery(
  client: WorkspaceClient,
  caller: Caller,
  id: string,
  options: { maxListPages: number; signal: AbortSignal },
): Promise<UpstreamQuery | null> {
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < options.maxListPages; page += 1) {
    const result = await client.listQueries(
      caller,
      cursor === undefined ? { limit: 100 } : { limit: 100, cursor },
      options.signal,
    );
    const found = result.items.find((item) => item.id === id);
    if (found) return found;
    if (!result.hasMore || !result.nextCursor || seen.has(result.nextCursor)) return null;
    seen.add(result.nextCursor);
    cursor = result.nextCursor;
  }
  return null;
}
