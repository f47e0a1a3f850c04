import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import pino from "pino";
import { type Config, loadConfig } from "../../src/config/config.js";
import { type Adapter, createAdapter } from "../../src/create-adapter.js";
import {
  type RunningWorkspace,
  type StartOptions,
  startEmbeddedWorkspace,
} from "../../src/embedded-workspace/start-embedded-workspace.js";

/** The fixture documents the tests' embedded workspace answers from. */
export const FIXTURE_DOCUMENTS = join(dirname(fileURLToPath(import.meta.url)), "../fixtures/documents");
/** The API key the tests' embedded workspace accepts. */
export const API_KEY = "sk-test-key";

/** An adapter and its embedded workspace, both over real loopback HTTP. */
export interface Stack {
  /** `http://127.0.0.1:port` of the adapter. */
  url: string;
  workspace: RunningWorkspace;
  adapter: Adapter;
  server: Server;
  close(): Promise<void>;
}

/** A running adapter on a loopback port. */
export interface RunningAdapter {
  url: string;
  adapter: Adapter;
  server: Server;
  close(): Promise<void>;
}

/** Starts an adapter in front of the given upstream; environment values override the test defaults. */
export async function startAdapter(upstreamUrl: string, environment: Record<string, string> = {}): Promise<RunningAdapter> {
  const config: Config = loadConfig({ POLL_INTERVAL_MIN_MS: "10", POLL_INTERVAL_MAX_MS: "50", ...environment });
  const adapter = createAdapter(config, upstreamUrl, { logger: pino({ level: "silent" }) });
  const server = createServer(adapter.app);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    adapter,
    server,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await adapter.close();
    },
  };
}

/** Starts the embedded workspace and an adapter in front of it; environment values override defaults. */
export async function startStack(
  environment: Record<string, string> = {},
  workspaceOptions: Partial<StartOptions> = {},
): Promise<Stack> {
  const workspace = await startEmbeddedWorkspace({
    documents: [FIXTURE_DOCUMENTS],
    workspaces: ["acme", "globex"],
    apiKeys: [API_KEY, "sk-other-key"],
    stepDelayMs: 10,
    ...workspaceOptions,
  });
  const running = await startAdapter(workspace.url, environment);
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
