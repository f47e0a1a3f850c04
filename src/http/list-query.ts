import type { ParsedUrlQuery } from "node:querystring";
import { RequestValidationError } from "../errors/adapter-error.js";

/** What a list request of OpenAI's asks for: its order, the id to start after, its page size. */
export interface ListQuery {
  order: "asc" | "desc";
  /** The id to start after (a repeated one names no item: a 422). */
  after: string | string[] | undefined;
  limit: number;
}

/** `order` (default desc), `after` and `limit` (1 to 100, default 20) of an item list (input items, conversation items); a 422 otherwise. */
export function readListQuery(query: ParsedUrlQuery): ListQuery {
  const { order = "desc", after, limit = "20" } = query;
  const issues = [];
  if (order !== "asc" && order !== "desc") issues.push({ loc: ["query", "order"], msg: "Input should be 'asc' or 'desc'", type: "enum", input: order });
  const size = Number(limit);
  if (!Number.isInteger(size) || size < 1 || size > 100) {
    issues.push({ loc: ["query", "limit"], msg: "Input should be an integer from 1 to 100", type: "int_range", input: limit });
  }
  if (issues.length > 0 || (order !== "asc" && order !== "desc")) throw new RequestValidationError(issues);
  return { order, after, limit: size };
}

/**
 * One page of items (oldest first) as OpenAI's list object: `data` in the asked order from after
 * `after`, `first_id`, `last_id`, `has_more`. An `after` that names no item is a 422 (`what` names
 * the kind of item in its message).
 */
export function pageOf<Item extends { id: string }>(items: readonly Item[], page: ListQuery, what: string) {
  const ordered = page.order === "desc" ? [...items].reverse() : items;
  const start = page.after === undefined ? 0 : ordered.findIndex((item) => item.id === page.after) + 1;
  if (page.after !== undefined && start === 0) {
    throw new RequestValidationError([{ loc: ["query", "after"], msg: `No ${what} with this id`, type: "value_error", input: page.after }]);
  }
  const data = ordered.slice(start, start + page.limit);
  return { object: "list" as const, data, first_id: data[0]?.id ?? "", last_id: data.at(-1)?.id ?? "", has_more: start + page.limit < ordered.length };
}
