/** What every page of a list endpoint says about the next one (docs/architecture/upstream.md#listing-and-pagination). */
export interface PageLink {
  nextCursor: string | null;
  hasMore: boolean;
}

/** The page request of docs/architecture/upstream.md#listing-and-pagination: the largest page, and the cursor when there is one. */
export type PageRequest = { limit: number; cursor?: string };

/** The largest page the interface allows (docs/architecture/upstream.md#listing-and-pagination). */
export const PAGE_LIMIT = 100;

/**
 * The pages of a list endpoint, first to last, as docs/architecture/upstream.md#listing-and-pagination say to read them: each
 * `next_cursor` passed back unchanged (never built or edited), stopping at the last page, at a
 * cursor seen before (a loop), or after `maxPages` (endless paging). The caller may stop early.
 */
export async function* followPages<T extends PageLink>(
  fetchPage: (request: PageRequest) => Promise<T>,
  maxPages: number,
): AsyncGenerator<T> {
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let count = 0; count < maxPages; count += 1) {
    const page = await fetchPage(cursor === undefined ? { limit: PAGE_LIMIT } : { limit: PAGE_LIMIT, cursor });
    yield page;
    if (!page.hasMore || !page.nextCursor || seen.has(page.nextCursor)) return;
    seen.add(page.nextCursor);
    cursor = page.nextCursor;
  }
}
