import type { WorkspaceClient } from "../../upstream/workspace-client.js";
import type { Lifecycle } from "../lifecycle.js";
import type { Route } from "../route-table.js";

/**
 * `GET /health`: liveness, no credential, answered even while draining (200 while the process
 * runs). `GET /ready`: readiness, 503 from the moment shutdown begins (at once, without asking the
 * upstream) and while the upstream does not answer its own `/health` (docs/operating.md, "Readiness and drain").
 */
export function healthRoutes(options: { client: WorkspaceClient; lifecycle: Lifecycle; readinessTimeoutMs?: number }): Route[] {
  return [
    {
      method: "GET",
      path: "/health",
      handler: {
        express: (_request, response) => {
          response.json({ status: "ok" });
        },
      },
      operation: { summary: "Liveness", responses: { "200": { description: "The process is up" } } },
    },
    {
      method: "GET",
      path: "/ready",
      handler: {
        express: async (_request, response) => {
          if (options.lifecycle.isDraining) {
            response.status(503).json({ status: "draining" });
            return;
          }
          const upstream = await options.client.checkHealth(AbortSignal.timeout(options.readinessTimeoutMs ?? 2000));
          response.status(upstream ? 200 : 503).json({ status: upstream ? "ready" : "unavailable", upstream });
        },
      },
      operation: {
        summary: "Readiness: not draining and the upstream answers",
        responses: { "200": { description: "Ready" }, "503": { description: "Draining, or the upstream does not answer" } },
      },
    },
  ];
}
