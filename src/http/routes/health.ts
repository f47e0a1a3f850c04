import type { WorkspaceClient } from "../../upstream/workspace-client.js";
import type { Lifecycle } from "../lifecycle.js";
import { sendJson } from "../error-response.js";
import { type Route, route } from "../route-table.js";

/**
 * `GET /health`: liveness, no credential, answered even while draining (200 while the process
 * runs). `GET /ready`: readiness, 503 from the moment shutdown begins (at once, without asking the
 * upstream) and while the upstream does not answer its own `/health` (docs/operating.md, "Readiness and drain").
 */
export function healthRoutes(options: { client: WorkspaceClient; lifecycle: Lifecycle; readinessTimeoutMs?: number }): Route[] {
  return [
    route("GET", "/health", ({ response }) => sendJson(response, { status: "ok" }), {
      summary: "Liveness",
      responses: { "200": { description: "The process is up" } },
    }),
    route(
      "GET",
      "/ready",
      async ({ response }) => {
        if (options.lifecycle.isDraining) {
          sendJson(response, { status: "draining" }, 503);
          return;
        }
        const upstream = await options.client.checkHealth(AbortSignal.timeout(options.readinessTimeoutMs ?? 2000));
        sendJson(response, { status: upstream ? "ready" : "unavailable", upstream }, upstream ? 200 : 503);
      },
      {
        summary: "Readiness: not draining and the upstream answers",
        responses: { "200": { description: "Ready" }, "503": { description: "Draining, or the upstream does not answer" } },
      },
    ),
  ];
}
