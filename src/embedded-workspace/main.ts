#!/usr/bin/env node
import { loadConfig } from "../config/config.js";
import { createLogger } from "../util/create-logger.js";
import { startEmbeddedWorkspace } from "./start-embedded-workspace.js";

// `npm run workspace`: the embedded workspace on its own, for pointing an adapter (or curl) at.
// Knobs: WORKSPACE_PORT (default 8081), EMBEDDED_DOCUMENTS_DIR, EMBEDDED_STEP_DELAY_MS,
// EMBEDDED_WORKSPACES, EMBEDDED_API_KEYS (comma-separated; unset accepts any bearer credential).
const config = loadConfig(process.env);
const logger = createLogger(config.log);
const keys = process.env.EMBEDDED_API_KEYS?.split(",")
  .map((key) => key.trim())
  .filter(Boolean);
const workspace = await startEmbeddedWorkspace({
  ...(config.embedded.documentsDir ? { documents: [config.embedded.documentsDir] } : {}),
  ...(keys && keys.length > 0 ? { apiKeys: keys } : {}),
  workspaces: config.embedded.workspaces,
  stepDelayMs: config.embedded.stepDelayMs,
  modeField: config.upstream.modeField,
  host: config.server.host,
  port: Number(process.env.WORKSPACE_PORT ?? 8081),
  watch: true,
  log: (level, fields, message) => logger[level](fields, message),
});
process.stdout.write(
  `Embedded workspace (a local stand-in for the Workspace Knowledge Service) listening on ${workspace.url}\n` +
    `Workspaces: ${config.embedded.workspaces.join(", ")}. Point the adapter at it with WORKSPACE_BASE_URL=${workspace.url}\n`,
);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void workspace.close().then(() => process.exit(0));
  });
}
