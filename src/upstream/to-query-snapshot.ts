import type { QuerySnapshot } from "../core/query-snapshot.js";
import { sourcesIn } from "./normalize-sources.js";
import type { UpstreamQuery } from "./query-schemas.js";

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
