import type { IncomingMessage } from "node:http";
import { timingSafeEqual } from "node:crypto";
import { AuthenticationError } from "../errors/adapter-error.js";
import { bearerCredential } from "./bearer-credential.js";
import { credentialHash } from "./credential-hash.js";

/**
 * The guard of `GET /metrics` with `METRICS_API_KEY` (docs/observability.md#metrics): the bearer
 * credential must be that key, compared by hash in constant time; none, or another, is a 401. With
 * no key configured, everyone passes.
 */
export function metricsKeyCheck(key: string | undefined): (request: IncomingMessage) => void {
  if (key === undefined) return () => undefined;
  const expected = Buffer.from(credentialHash(key), "base64url");
  return (request) => {
    const given = Buffer.from(credentialHash(bearerCredential(request)), "base64url");
    if (!timingSafeEqual(given, expected)) throw new AuthenticationError("Invalid metrics key: /metrics asks for METRICS_API_KEY");
  };
}
