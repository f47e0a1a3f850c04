import pino from "pino";
import { answerVariables } from "../../config/answer-settings.js";
import { loadConfig } from "../../config/config.js";
import { upstreamVariables } from "../../config/upstream-settings.js";
import { createAdapter } from "../../server/create-adapter.js";
import { startServer } from "../../server/start-server.js";
import type { ProbeContext } from "../probe-context.js";

/** The adapter itself, serving on loopback for the run: where, and how to stop it. */
export interface OwnAdapter {
  url: string;
  close(): Promise<void>;
}

/**
 * Starts the adapter in this process, in front of the service the probes call, configured from the
 * same upstream and answer variables as the run (docs/check.md#side-by-side), so that its answer
 * is exactly what a deployment with these settings would give. It keys nothing of its own: the
 * checked key passes through, and nothing else (Redis, limits, OAuth, audit) is started.
 */
export async function startOwnAdapter(context: ProbeContext): Promise<OwnAdapter> {
  const { settings } = context;
  const environment: Record<string, string | undefined> = {};
  for (const name of [...Object.keys(upstreamVariables.shape), ...Object.keys(answerVariables.shape)]) {
    environment[name] = settings.environment[name];
  }
  const allowed = settings.config.upstream.realtimeAllowedHosts;
  // Recording: the service's channels are relayed by the tap on loopback, which the probes' policy allows already.
  const tapped = context.upstreamUrl !== settings.baseUrl && allowed.length > 0;
  const config = loadConfig({
    ...environment,
    WORKSPACE_BASE_URL: context.upstreamUrl,
    DEFAULT_WORKSPACE: settings.workspace,
    REALTIME_ALLOWED_HOSTS: tapped ? [...allowed, "127.0.0.1"].join(",") : environment.REALTIME_ALLOWED_HOSTS,
    HOST: "127.0.0.1",
    PORT: "0",
    MCP: "off",
  });
  const adapter = createAdapter(config, context.upstreamUrl, { logger: pino({ level: "silent" }) });
  const running = await startServer(adapter, config);
  return {
    url: running.url,
    async close() {
      running.closeAllConnections();
      await new Promise<void>((resolve) => running.server.close(() => resolve()));
      await adapter.close();
    },
  };
}
