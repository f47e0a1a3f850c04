import type { PageLink } from "./follow-pages.js";
import { callJson } from "./json-call.js";
import { type UpstreamPage, type UpstreamQuery, upstreamPageSchema, upstreamQuerySchema } from "./query-schemas.js";
import { createTransport, type TransportOptions } from "./transport.js";

/** Who a call is made for: the credential to present and the workspace to select (docs/architecture/upstream.md#authentication-and-workspaces). */
export interface Caller {
  credential: string;
  workspace: string;
  /** `credentialHash(credential)` when the caller has it already, so a request hashes its credential once. */
  credentialKey?: string | undefined;
}

/** One page of `GET /queries`, with the items that could be read (unreadable items are skipped). */
export interface QueryPage {
  items: UpstreamQuery[];
  nextCursor: string | null;
  hasMore: boolean;
}

/** One page of `GET /workspaces`: the ids that could be read (record fields are not shown in the interface). */
export interface WorkspacePage {
  ids: string[];
  nextCursor: string | null;
  hasMore: boolean;
}

/** The calls the adapter makes to the Workspace Knowledge Service (docs/architecture/upstream.md#queries, Queries area). */
export interface WorkspaceClient {
  readonly baseUrl: string;
  /** `POST /queries`; made within a span (an answer's: `Tracing.withSpan`), a client span of its own and its context sent along. */
  createQuery(caller: Caller, body: Record<string, unknown>, signal?: AbortSignal): Promise<UpstreamQuery>;
  /** One page of `GET /queries`; traced as `createQuery` is (within an answer's span, or a poll's). */
  listQueries(caller: Caller, page: { limit: number; cursor?: string }, signal?: AbortSignal): Promise<QueryPage>;
  /** `GET /workspaces` (docs/architecture/upstream.md#queries): one page of the workspaces the credential can list. */
  listWorkspaces(credential: string, page: { limit: number; cursor?: string }, signal?: AbortSignal): Promise<WorkspacePage>;
  /** `GET /health`: whether the upstream answers at all (no credential, docs/architecture/upstream.md#authentication-and-workspaces). */
  checkHealth(signal?: AbortSignal): Promise<boolean>;
  close(): Promise<void>;
}

/** Settings of the upstream HTTP client: its transport's (bounds, retries, pool, metrics, tracing). */
export type WorkspaceClientOptions = TransportOptions;

/**
 * The upstream's endpoints (docs/architecture/upstream.md#queries) over the undici transport (transport.ts):
 * each a JSON call whose failures are the adapter's errors (upstream-errors.ts,
 * docs/upstream-assumptions.md#upstream-errors) and whose list pages are read item by item.
 */
export function createWorkspaceClient(options: WorkspaceClientOptions): WorkspaceClient {
  const transport = createTransport(options);
  return {
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    createQuery: (caller, body, signal) => callJson(transport, { method: "POST", path: "/queries", caller, schema: upstreamQuerySchema, body, signal }),
    async listQueries(caller, page, signal) {
      const search = pageSearch(page);
      const result = await callJson(transport, { method: "GET", path: "/queries", search, caller, schema: upstreamPageSchema, signal });
      return readPage(result, readQuery);
    },
    async listWorkspaces(credential, page, signal) {
      const caller = { credential, workspace: null };
      const search = pageSearch(page);
      const result = await callJson(transport, { method: "GET", path: "/workspaces", search, caller, schema: upstreamPageSchema, signal });
      const { items, ...link } = readPage(result, readWorkspaceId);
      return { ids: items, ...link };
    },
    async checkHealth(signal) {
      try {
        const response = await transport.send({ method: "GET", path: "/health", headers: { accept: "application/json" }, body: null }, signal);
        return response.statusCode >= 200 && response.statusCode < 300;
      } catch {
        return false;
      }
    },
    close: () => transport.close(),
  };
}

/** The query string of a page request (docs/architecture/upstream.md#listing-and-pagination). */
function pageSearch(page: { limit: number; cursor?: string }): URLSearchParams {
  const search = new URLSearchParams({ limit: String(page.limit) });
  if (page.cursor !== undefined) search.set("cursor", page.cursor);
  return search;
}

/** A list page's items read one by one (an unreadable item is skipped, not fatal) and its link to the next page. */
function readPage<T>(result: UpstreamPage, read: (item: unknown) => T | undefined): { items: T[] } & PageLink {
  const items: T[] = [];
  for (const item of result.data) {
    const value = read(item);
    if (value !== undefined) items.push(value);
  }
  return { items, nextCursor: result.next_cursor ?? null, hasMore: result.has_more ?? Boolean(result.next_cursor) };
}

/** A query record of `GET /queries`, when it can be read. */
function readQuery(item: unknown): UpstreamQuery | undefined {
  const parsed = upstreamQuerySchema.safeParse(item);
  return parsed.success ? parsed.data : undefined;
}

/** A workspace record's id (record fields are not shown in the interface: `id`, `workspace_id` or `slug`). */
function readWorkspaceId(item: unknown): string | undefined {
  const record = (typeof item === "object" && item !== null ? item : {}) as Record<string, unknown>;
  const id = [record.id, record.workspace_id, record.slug].find((value) => typeof value === "string" && value !== "");
  return typeof id === "string" ? id : undefined;
}
