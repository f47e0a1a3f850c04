/** How often a continuing problem is reported again. */
const QUIET_MS = 60_000;

/**
 * Reports failed exports for the log (the collector is down or refuses the spans): the first
 * failure, then at most one line a minute with how many failed meanwhile, and once when exports
 * succeed again. Returns what to call with each export's outcome.
 */
export function exportFailures(
  report: (message: string) => void,
  now: () => number = () => performance.now(),
): (error: Error | undefined) => void {
  let failures = 0;
  let reportedAt = Number.NEGATIVE_INFINITY;
  return (error) => {
    if (!error) {
      if (failures > 0) report(`trace export works again (${failures} batch${failures === 1 ? "" : "es"} of spans lost)`);
      failures = 0;
      reportedAt = Number.NEGATIVE_INFINITY;
      return;
    }
    failures += 1;
    if (now() - reportedAt < QUIET_MS) return;
    reportedAt = now();
    report(`trace export failed, spans are lost (${failures} batch${failures === 1 ? "" : "es"} so far): ${error.message || "no reason given"}`);
  };
}

/**
 * Reports spans dropped because the exporter cannot keep up (the queue of spans waiting is full):
 * the first drop, then at most one line a minute while drops go on, with the count so far.
 */
export function queueFullReports(
  report: (message: string) => void,
  limit: string,
  now: () => number = () => performance.now(),
): (dropped: number) => void {
  let reportedAt = Number.NEGATIVE_INFINITY;
  return (dropped) => {
    if (now() - reportedAt < QUIET_MS) return;
    reportedAt = now();
    report(`trace export cannot keep up: spans are dropped (${dropped} so far; ${limit}); see adapter_trace_spans_dropped_total`);
  };
}
