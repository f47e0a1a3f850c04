import type { MetricsSettings } from "../../config/config.js";
import type { Metrics } from "../../metrics/metrics.js";
import { metricsExposition } from "../metrics-exposition.js";
import { errorResponse } from "../openapi.js";
import { type Route, route } from "../route-table.js";

/**
 * `GET /metrics` on the API port (docs/observability.md#metrics), unless `METRICS_PORT` gives it a
 * port of its own (the API port then answers 404 there); behind `METRICS_API_KEY` when it is set.
 */
export function metricsRoutes(options: { metrics: Metrics; settings: MetricsSettings }): Route[] {
  if (options.settings.port !== undefined) return [];
  const expose = metricsExposition(options.metrics, options.settings);
  return [
    route("GET", "/metrics", ({ request, response }) => expose(request, response), {
      summary: "Prometheus metrics",
      responses: { "200": { description: "Text exposition format" }, "401": errorResponse("METRICS_API_KEY is set, and another key (or none) came") },
    }),
  ];
}
