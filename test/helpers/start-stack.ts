import type { Server } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import pino, { type Logger } from "pino";
import { type Config, loadConfig } from "../../src/config/config.js";
import { type Adapter, type AdapterEffects, createAdapter } from "../../src/server/create-adapter.js";
import {
  type RunningWorkspace,
  type StartOptions,
  startEmbeddedWorkspace,
} from "../../src/embedded-workspace/start-embedded-workspace.js";
import { startServer } from "../../src/server/start-server.js";
import { SCHEMA_WORKER_LIMITS, workerSchemas } from "../../src/structured/schema-worker-pool.js";
import { projectRoot } from "../../src/util/package-info.js";

/** The fixture documents the tests' embedded workspace answers from. */
export const FIXTURE_DOCUMENTS = join(dirname(fileURLToPath(import.meta.url)), "../fixtures/documents");
/** The API key the tests' embedded workspace accepts. */
export const API_KEY = "sk-test-key";

/** An adapter and its embedded workspace, both over real loopback HTTP. */
export interface Stack extends RunningAdapter {
  workspace: RunningWorkspace;
}

/** A running adapter on a loopback port. */
export interface RunningAdapter {
  url: string;
  /** Where `METRICS_PORT` serves `/metrics`, when it is set. */
  metricsUrl: string | undefined;
  adapter: Adapter;
  server: Server;
  /** The graceful shutdown of `main.ts` (drain, then end streams). */
  shutdown(): Promise<void>;
  /** Stops at once (test teardown). */
  close(): Promise<void>;
}

/** Starts an adapter in front of the given upstream, as `main.ts` serves it; environment values override the test defaults. */
export async function startAdapter(
  upstreamUrl: string,
  environment: Record<string, string> = {},
  logger: Logger = pino({ level: "silent" }),
  effects: AdapterEffects = {},
): Promise<RunningAdapter> {
  const config: Config = loadConfig({ POLL_INTERVAL_MIN_MS: "10", POLL_INTERVAL_MAX_MS: "50", HOST: "127.0.0.1", PORT: "0", ...environment });
  // Schemas on the compiled worker, as `npm start` checks them (feature suites run with dist/ current, test/compiled-setup.ts).
  const { schemaMaxBytes: maxBytes, schemaMaxDepth: maxDepth } = config.answers.structured;
  const schemas = effects.schemas ?? workerSchemas({ maxBytes, maxDepth }, SCHEMA_WORKER_LIMITS, join(projectRoot(), "dist/src/structured/schema-worker.js"));
  const adapter = createAdapter(config, upstreamUrl, { logger, schemas, ...effects });
  const running = await startServer(adapter, config);
  return {
    url: running.url,
    metricsUrl: running.metricsUrl,
    adapter,
    server: running.server,
    shutdown: running.shutdown,
    async close() {
      // The graceful shutdown's end, at once: both ports closed, then the adapter.
      running.closeAllConnections();
      await new Promise<void>((resolve) => running.server.close(() => resolve()));
      await running.closeMetrics();
      await adapter.close();
    },
  };
}

/** Starts the embedded workspace and an adapter in front of it; environment values override defaults. */
export async function startStack(
  environment: Record<string, string> = {},
  workspaceOptions: Partial<StartOptions> = {},
  effects: AdapterEffects = {},
): Promise<Stack> {
  const workspace = await startEmbeddedWorkspace({
    documents: [FIXTURE_DOCUMENTS],
    workspaces: ["acme", "globex"],
    apiKeys: [API_KEY, "sk-other-key"],
    stepDelayMs: 10,
    ...workspaceOptions,
  });
  const running = await startAdapter(workspace.url, environment, undefined, effects);
  return {
    ...running,
    workspace,
    async close() {
      await running.close();
      await workspace.close();
    },
  };
}

/** Headers of an authenticated request to workspace `acme`. */
export function headers(extra: Record<string, string> = {}): Record<string, string> {
  return {
    authorization: `Bearer ${API_KEY}`,
    "service-workspace": "acme",
    "content-type": "application/json",
    ...extra,
  };
}

/** A minimal valid chat request body. */
export function chatBody(content: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: "ask", messages: [{ role: "user", content }], ...extra };
}
