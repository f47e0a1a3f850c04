import type { UpstreamUsage } from "../translate/count-usage.js";
import { sourcesIn } from "../translate/normalize-sources.js";
import type { SourceRecord } from "../translate/source-record.js";
import type { UpstreamQuery } from "./query-schemas.js";

/** Query statuses of the interface (§ States and transitions); anything else reads as PROCESSING. */
export type QueryStatus = "PENDING" | "PROCESSING" | "PROCESSED" | "FAILED";

/** What the adapter knows about a query at one moment: the value that flows from the watcher on. */
export interface QuerySnapshot {
  id: string;
  status: QueryStatus;
  output: string;
  steps: unknown[];
  /** Structured sources found on the query or its steps (DESIGN.md, Contract item 7). */
  sources: SourceRecord[];
  usage: UpstreamUsage | undefined;
}

/** Whether a query has ended (PROCESSED or FAILED). */
export function isTerminal(status: QueryStatus): boolean {
  return status === "PROCESSED" || status === "FAILED";
}

/** Turns an upstream query (create answer or list item) into a snapshot. */
export function toQuerySnapshot(query: UpstreamQuery): QuerySnapshot {
  const steps = query.steps ?? [];
  const status = (query.status ?? "").toUpperCase();
  return {
    id: query.id,
    status: status === "PENDING" || status === "PROCESSED" || status === "FAILED" ? status : "PROCESSING",
    output: query.output ?? "",
    steps,
    sources: [...sourcesIn(query), ...steps.flatMap(sourcesIn)],
    usage: query.usage
      ? {
          prompt_tokens: query.usage.prompt_tokens ?? undefined,
          completion_tokens: query.usage.completion_tokens ?? undefined,
        }
      : undefined,
  };
}

/** Whether two snapshots differ in anything a client would see. */
export function snapshotChanged(before: QuerySnapshot | undefined, after: QuerySnapshot): boolean {
  return (
    !before ||
    before.status !== after.status ||
    before.output !== after.output ||
    before.steps.length !== after.steps.length ||
    before.sources.length !== after.sources.length
  );
}

/**
 * Keeps what an earlier snapshot knew and a later one omits: list items carry fewer fields than
 * the create answer (§ Query: "Items in the query list carry only …"), so sources and usage seen
 * once are kept.
 */
export function mergeSnapshots(before: QuerySnapshot | undefined, after: QuerySnapshot): QuerySnapshot {
  if (!before) return after;
  return {
    ...after,
    sources: after.sources.length > 0 ? after.sources : before.sources,
    usage: after.usage ?? before.usage,
  };
}
