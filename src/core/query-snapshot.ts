import type { RealtimeChannel } from "./realtime-channel.js";
import type { SourceRecord } from "./source-record.js";
import type { UpstreamUsage } from "./usage.js";

/** Query statuses of the interface (docs/architecture/upstream.md#queries); anything else reads as PROCESSING. */
export type QueryStatus = "PENDING" | "PROCESSING" | "PROCESSED" | "FAILED";

/** What the adapter knows about a query at one moment: the value that flows from the watcher on. */
export interface QuerySnapshot {
  id: string;
  status: QueryStatus;
  output: string;
  steps: unknown[];
  /** Structured sources found on the query or its steps (docs/upstream-assumptions.md#sources-and-citations). */
  sources: SourceRecord[];
  usage: UpstreamUsage | undefined;
  /** The create answer's realtime channel, when it has a complete one; list items never carry it. */
  channel?: RealtimeChannel;
}

/** Whether a query has ended (PROCESSED or FAILED). */
export function isTerminal(status: QueryStatus): boolean {
  return status === "PROCESSED" || status === "FAILED";
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
 * the create answer (docs/architecture/upstream.md#queries: "Items in the query list carry only …"), so sources and usage seen
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
