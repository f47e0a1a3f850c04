import { Router } from "express";
import type { WorkspaceClient } from "../../upstream/workspace-client.js";
import type { Lifecycle } from "../lifecycle.js";

/**
 * `GET /health`: liveness, no credential, answered even while draining. `GET /ready`: readiness,
 * 503 while draining or when the upstream does not answer its own `/health`.
 */
export function healthRouter(options: { client: WorkspaceClient; lifecycle: Lifecycle; readinessTimeoutMs?: number }): Router {
  const router = Router();
  router.get("/health", (_request, response) => {
    response.json({ status: "ok" });
  });
  router.get("/ready", async (_request, response) => {
    const upstream = await options.client.checkHealth(
      AbortSignal.timeout(options.readinessTimeoutMs ?? 2000),
    );
    response.status(upstream ? 200 : 503).json({ status: upstream ? "ready" : "unavailable", upstream });
  });
  return router;
}
