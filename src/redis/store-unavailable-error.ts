import { ServiceUnavailableError } from "../errors/adapter-error.js";

/**
 * A shared store could not answer: Redis is known to be unreachable (the command was not sent), or
 * the command failed or took longer than the command timeout. It never means "not found"; callers
 * that can do better catch it (docs/architecture/redis.md#redis-down-or-slow), and one that reaches the
 * edge is a 503 to send again shortly.
 */
export class StoreUnavailableError extends ServiceUnavailableError {
  constructor(reason: string, cause?: unknown) {
    super(`The shared store (Redis) does not answer now (${reason}); send the request again shortly`, {
      code: "store_unavailable",
      headers: { "retry-after": "1" },
      cause,
    });
  }
}
