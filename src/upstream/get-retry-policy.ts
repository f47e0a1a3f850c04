/**
 * When a call to the workspace service is tried again (docs/operating.md#the-upstream-connection):
 * only idempotent reads (list and health GETs), only on connection errors and 502/503/504, at most
 * `retries` times, after a capped, fully jittered exponential wait. A create is never repeated (a
 * repeated create would continue the query: see create-query.ts); a 429 is never retried here (it
 * goes back to the client with its `retry-after`, so the client's own SDK paces itself).
 *
 * Why not undici's `RetryAgent`/`RetryHandler` (undici is already a dependency): it retries 429 and
 * 500 by default and honours `Retry-After` up to `maxTimeout` (holding an answer while the upstream
 * sheds load), its backoff has no jitter (replicas that failed together retry together), it sends
 * every attempt with the same headers (the docs promise a client span per attempt, each with its
 * own `traceparent`), and with `throwOnError` it turns the last 503 into a `RequestRetryError`
 * instead of the answer. Configuring all that away leaves only its loop, which is these few lines.
 */
export interface GetRetryPolicy {
  /** How many times a GET is tried again after the first attempt. */
  readonly retries: number;
  /** Whether this method may be tried again at all (idempotent reads only). */
  retriesMethod(method: string): boolean;
  /** Whether an answer with this status is worth another attempt. */
  retriesStatus(status: number): boolean;
  /** Whether a transport error (by its `code`) is worth another attempt. */
  retriesError(error: unknown): boolean;
  /** The wait before retry number `attempt + 1`: uniform in [0, min(capMs, baseMs · 2^attempt)). */
  delayMs(attempt: number, random?: () => number): number;
}

/** The statuses a read is retried on: the upstream's gateway said the service was briefly away. */
export const RETRIED_STATUSES: ReadonlySet<number> = new Set([502, 503, 504]);

/** Transport errors after which the same read can simply be sent again. */
export const RETRIED_ERROR_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/** The policy with `retries` retries and a backoff of 50 ms, 100 ms, 200 ms … capped at 1 s. */
export function getRetryPolicy(
  retries: number,
  backoff: { baseMs: number; capMs: number } = { baseMs: 50, capMs: 1000 },
): GetRetryPolicy {
  return {
    retries,
    retriesMethod: (method) => method === "GET",
    retriesStatus: (status) => RETRIED_STATUSES.has(status),
    retriesError: (error) => RETRIED_ERROR_CODES.has((error as { code?: string } | null)?.code ?? ""),
    delayMs: (attempt, random = Math.random) => random() * Math.min(backoff.capMs, backoff.baseMs * 2 ** attempt),
  };
}
