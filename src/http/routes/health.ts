import { Router } from "express";
import type { WorkspaceClient } from "../../upstream/workspace-client.js";

/** `GET /health` (liveness, no credential) and `GET /ready` (the upstream answers its own `/health`). */
export function healthRouter(options: { client: WorkspaceClient; readinessTimeoutMs?: number }): Router {
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
