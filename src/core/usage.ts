/** Token usage the upstream reported on a query, when it reports any (docs/upstream-assumptions.md#usage). */
export interface UpstreamUsage {
  prompt_tokens?: number | undefined;
  completion_tokens?: number | undefined;
}
