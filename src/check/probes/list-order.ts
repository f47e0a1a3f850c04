import { followPages, PAGE_LIMIT, type PageRequest } from "../../upstream/follow-pages.js";
import type { QueryPage } from "../../upstream/workspace-client.js";
import { type CheckLine, checkLine } from "../check-report.js";
import { describeFailure } from "../describe-failure.js";
import { callerOf, type ProbeContext } from "../probe-context.js";
import type { QueryRun } from "./query-runs.js";

/**
 * The list order the poller relies on (docs/upstream-assumptions.md#polling): read as the poller
 * reads it (`limit=100`, `next_cursor` followed, `MAX_LIST_PAGES` at most), the queries just
 * created must come first, the newest at the top. A list that is oldest first works only while the
 * workspace holds fewer queries than the pages the poller reads.
 */
export async function probeListOrder(context: ProbeContext, runs: readonly QueryRun[]): Promise<CheckLine> {
  context.phase("list-order");
  const { maxListPages, timeoutMs } = context.settings.config.upstream;
  const ids = runs.flatMap((run) => (run.created ? [run.created.id] : []));
  const positions = new Map<string, number>();
  let listed = 0;
  let lastPage = false;
  try {
    const list = (request: PageRequest) => context.client.listQueries(callerOf(context), request);
    for await (const page of followPages(list, maxListPages)) {
      for (const item of page.items) {
        if (ids.includes(item.id) && !positions.has(item.id)) positions.set(item.id, listed);
        listed += 1;
      }
      lastPage = !page.hasMore;
      if (positions.size === ids.length) break;
    }
  } catch (error) {
    const failure = describeFailure(error, "GET /queries", timeoutMs);
    return checkLine("list-order", "fail", `GET /queries?limit=${PAGE_LIMIT} (the poller's page): ${failure.detail}`, failure.setting);
  }
  const newest = ids[ids.length - 1];
  if (newest === undefined) return checkLine("list-order", "skip", "no query was created");
  const found = ids.map((id) => positions.get(id));
  if (found.every((position) => position === undefined)) {
    return checkLine("list-order", "fail", `the queries just created are not in the first ${maxListPages} pages of GET /queries: the poller would never find them`, "MAX_LIST_PAGES");
  }
  const known = found.filter((position): position is number => position !== undefined);
  const decreasing = known.every((position, index) => index === 0 || position < (known[index - 1] as number));
  const increasing = known.every((position, index) => index === 0 || position > (known[index - 1] as number));
  const top = positions.get(newest);
  const oldestFirst = known.length >= 2 ? increasing : lastPage && top === listed - 1 && listed > 1;
  if (oldestFirst) {
    return checkLine(
      "list-order",
      "fail",
      `GET /queries lists oldest first (the queries just created are at ${known.map((position) => position + 1).join(", ")} of ${listed}): ` +
        `the poller reads the first ${maxListPages} pages, newest first, and would not find a new query once the workspace holds more than ${maxListPages * PAGE_LIMIT}`,
    );
  }
  if ((known.length < 2 || decreasing) && top === 0) {
    return checkLine("list-order", "pass", `newest first: the query created last is the first item of GET /queries?limit=${PAGE_LIMIT}${known.length >= 2 ? ", the others after it in order" : ""}`);
  }
  return checkLine("list-order", "warn", `the query created last is item ${top === undefined ? "(not found)" : top + 1} of GET /queries (other queries created meanwhile?); the poller expects new queries at the top`);
}

/** The page size the paging check asks for: the smallest, so that two queries make two pages. */
const PAGING_LIMIT = 1;
/** Pages the paging check reads at most. */
const PAGING_PAGES = 3;

/**
 * Paging as the poller follows it (docs/upstream-assumptions.md#polling, follow-pages.ts): small
 * pages, each `next_cursor` passed back unchanged; no item may come twice, `has_more` must come
 * with a cursor, and the last page says so.
 */
export async function probePaging(context: ProbeContext): Promise<CheckLine> {
  context.phase("list-paging");
  const pages: QueryPage[] = [];
  try {
    const list = (request: PageRequest) => context.client.listQueries(callerOf(context), { ...request, limit: PAGING_LIMIT });
    for await (const page of followPages(list, PAGING_PAGES)) pages.push(page);
  } catch (error) {
    const failure = describeFailure(error, "GET /queries", context.settings.config.upstream.timeoutMs);
    return checkLine("list-paging", "fail", `GET /queries?limit=${PAGING_LIMIT}: ${failure.detail}`, failure.setting);
  }
  const first = pages[0] as QueryPage;
  if (first.items.length > PAGING_LIMIT) return checkLine("list-paging", "warn", `limit=${PAGING_LIMIT} answered ${first.items.length} items: the service does not honour limit, paging was not tried`);
  if (first.hasMore && !first.nextCursor) return checkLine("list-paging", "fail", "has_more is true without a next_cursor: the poller cannot read a second page");
  if (pages.length === 1) {
    return checkLine("list-paging", "warn", first.items.length === 0 ? "the workspace lists no query: paging was not tried" : "the workspace lists one query: a second page could not be tried");
  }
  const ids = pages.flatMap((page) => page.items.map((item) => item.id));
  if (new Set(ids).size < ids.length) return checkLine("list-paging", "fail", "a page repeats an earlier page's item: next_cursor was not honoured, the poller would read the same queries again");
  const last = pages[pages.length - 1] as QueryPage;
  const looped = pages.slice(0, -1).some((page) => page.nextCursor === last.nextCursor && last.hasMore);
  if (looped) return checkLine("list-paging", "fail", "next_cursor came back unchanged: the poller stops there (a loop)");
  const end = last.hasMore ? `more after ${pages.length} pages` : `the last page says has_more false${last.nextCursor === null ? ", next_cursor null" : ""}`;
  return checkLine("list-paging", "pass", `limit=${PAGING_LIMIT} pages follow next_cursor: ${pages.length} pages, no item twice; ${end}`);
}
