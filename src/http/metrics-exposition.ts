import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { metricsKeyCheck } from "../auth/metrics-key.js";
import type { MetricsSettings } from "../config/config.js";
import { MethodNotAllowedError, NotFoundError, toAdapterError } from "../errors/adapter-error.js";
import type { Metrics } from "../metrics/metrics.js";
import { hostRefusal, type GuardSettings } from "./edge-guard.js";
import { sendError } from "./error-response.js";
import { pathOf } from "./request-contexts.js";

/**
 * `GET /metrics` (docs/observability.md#metrics): the Prometheus exposition of the adapter's
 * registry, behind `METRICS_API_KEY` when it is set (a 401 otherwise, thrown).
 */
export function metricsExposition(metrics: Metrics, settings: Pick<MetricsSettings, "apiKey">): (request: IncomingMessage, response: ServerResponse) => Promise<void> {
  const check = metricsKeyCheck(settings.apiKey);
  return async (request, response) => {
    check(request);
    const text = await metrics.registry.metrics();
    response.setHeader("content-type", metrics.registry.contentType);
    response.setHeader("cache-control", "no-store");
    response.end(text);
  };
}

/**
 * The listener of `METRICS_PORT`: `GET /metrics` alone, behind the same `Host` rule as the API port
 * (with the embedded workspace, or `ALLOWED_HOSTS`) and `METRICS_API_KEY`; any other path is a 404,
 * another method a 405. Nothing else of the adapter is reachable there.
 */
export function metricsListener(metrics: Metrics, settings: Pick<MetricsSettings, "apiKey">, server: Pick<GuardSettings, "hosts">): RequestListener {
  const expose = metricsExposition(metrics, settings);
  return (request, response) => {
    const path = pathOf(request.url);
    const refused =
      (server.hosts.checked ? hostRefusal(request, server) : undefined) ??
      (path !== "/metrics" ? new NotFoundError(`No route for ${request.method} ${path}: this port serves GET /metrics alone`) : undefined) ??
      (request.method !== "GET" ? new MethodNotAllowedError(request.method ?? "", path, ["GET"]) : undefined);
    if (refused) {
      sendError(response, refused);
      return;
    }
    expose(request, response).catch((error: unknown) => sendError(response, toAdapterError(error)));
  };
}
