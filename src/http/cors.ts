import type { IncomingMessage, ServerResponse } from "node:http";
import { allowedHeaders, exposedHeaders } from "./headers.js";

// Both lists are written from the one list of the adapter's headers (http/headers.ts).
const ALLOWED_HEADERS = allowedHeaders();
const EXPOSED_HEADERS = exposedHeaders();

/** Whether a browser origin is one the deployment allows (`CORS_ORIGINS`; `*` allows any). */
export function originAllowed(origin: string, allowedOrigins: readonly string[]): boolean {
  return allowedOrigins.includes("*") || allowedOrigins.includes(origin);
}

/**
 * CORS for browser clients, off by default: only origins in the allowlist get CORS headers (and
 * answered preflights); `*` allows any origin. A bearer-credential API should not be callable
 * from every web page a user happens to visit. Returns whether it answered the request (a preflight).
 */
export function corsHandler(allowedOrigins: readonly string[]): (request: IncomingMessage, response: ServerResponse) => boolean {
  const anyOrigin = allowedOrigins.includes("*");
  const allowed = new Set(allowedOrigins);
  return (request, response) => {
    const origin = request.headers.origin;
    if (!origin || (!anyOrigin && !allowed.has(origin))) return false;
    response.setHeader("access-control-allow-origin", anyOrigin ? "*" : origin);
    response.setHeader("vary", "Origin");
    response.setHeader("access-control-expose-headers", EXPOSED_HEADERS);
    if (request.method !== "OPTIONS") return false;
    response.setHeader("access-control-allow-methods", "GET, POST, OPTIONS");
    response.setHeader("access-control-allow-headers", request.headers["access-control-request-headers"] ?? ALLOWED_HEADERS);
    response.setHeader("access-control-max-age", "600");
    response.statusCode = 204;
    response.end();
    return true;
  };
}
