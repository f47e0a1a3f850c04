import { GatewayTimeoutError, UpstreamError } from "../errors/adapter-error.js";
import { followPages, type PageRequest } from "./follow-pages.js";
import type { UpstreamQuery } from "./query-schemas.js";
import type { Caller, WorkspaceClient } from "./workspace-client.js";

/**
 * `POST /queries` with a client-chosen id (docs/upstream-assumptions.md#query-ids-and-lost-creates). When the answer is lost
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

/** Looks for a query id in the first `maxListPages` pages of `GET /queries` (docs/architecture/upstream.md#listing-and-pagination). */
export async function findQuery(
  client: WorkspaceClient,
  caller: Caller,
  id: string,
  options: { maxListPages: number; signal: AbortSignal },
): Promise<UpstreamQuery | null> {
  const list = (request: PageRequest) => client.listQueries(caller, request, options.signal);
  for await (const page of followPages(list, options.maxListPages)) {
    const found = page.items.find((item) => item.id === id);
    if (found) return found;
  }
  return null;
}
