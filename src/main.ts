#!/usr/bin/env node
import type { AddressInfo } from "node:net";
import { parseCommandLine } from "./config/command-line.js";
import { packageVersion } from "./util/package-info.js";
import { type Config, ConfigError, loadConfig } from "./config/config.js";
import { createAdapter } from "./server/create-adapter.js";
import { startServer } from "./server/start-server.js";
import { documentReader } from "./embedded-workspace/read-document.js";
import { createLogger } from "./util/create-logger.js";
import { startTracing } from "./telemetry/start-tracing.js";
import type { TracingStart } from "./telemetry/tracing.js";
import { TracingSettingsError } from "./telemetry/tracing-environment.js";
import {
  defaultDocuments,
  type RunningWorkspace,
  startEmbeddedWorkspace,
} from "./embedded-workspace/start-embedded-workspace.js";

// The entry point: owns configuration, the port, the embedded workspace and signals.

const command = parseCommandLine(process.argv.slice(2), packageVersion());
if (command.kind === "print") {
  (command.exitCode === 0 ? process.stdout : process.stderr).write(command.text);
  process.exit(command.exitCode);
}

let config: Config;
try {
  config = loadConfig({ ...process.env, ...command.environment });
} catch (error) {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
  throw error;
}

// Tracing first (docs/observability.md): the logger's lines carry the trace ids when it is on.
let traced: TracingStart;
try {
  traced = await startTracing({
    serviceVersion: packageVersion(),
    onExportError: (message) => logger.warn({ endpoint: "otlp" }, message),
  });
} catch (error) {
  if (error instanceof TracingSettingsError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
  throw error;
}
const { tracing } = traced;
const mixin = tracing && (() => tracing.logFields());
const logger = createLogger({ ...config.log, mixin });
for (const warning of traced.warnings) logger.warn(warning);
if (tracing) logger.info(traced.summary);
let embedded: RunningWorkspace | undefined;
let upstreamUrl = config.upstream.baseUrl;
const documentRoots = config.embedded.documentsDir ? [config.embedded.documentsDir] : defaultDocuments();
if (!upstreamUrl) {
  embedded = await startEmbeddedWorkspace({
    documents: documentRoots,
    workspaces: config.embedded.workspaces,
    stepDelayMs: config.embedded.stepDelayMs,
    modeField: config.upstream.modeField,
    watch: true,
    log: (level, fields, message) => logger[level](fields, message),
  });
  upstreamUrl = embedded.url;
  const defaultWorkspace = config.upstream.defaultWorkspace ?? config.embedded.workspaces[0];
  config = { ...config, upstream: { ...config.upstream, defaultWorkspace } };
}

// Set once the server listens: the embedded workspace's citations link to the adapter's document page.
let listening = "";
const adapter = createAdapter(
  config,
  upstreamUrl,
  embedded
    ? { logger, tracing, documents: documentReader(documentRoots), publicUrl: () => config.server.publicUrl ?? listening }
    : { logger, tracing },
);
if (embedded) {
  adapter.logger.info(
    { upstream: embedded.url, workspaces: config.embedded.workspaces },
    "using the EMBEDDED WORKSPACE: a local stand-in for the Workspace Knowledge Service (set WORKSPACE_BASE_URL to use a real one)",
  );
}

const running = await startServer(adapter, config);
const { port } = running.server.address() as AddressInfo;
const host = config.server.host === "0.0.0.0" || config.server.host === "::" ? "localhost" : config.server.host;
listening = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
const base = `${listening}/v1`;
adapter.logger.info({ url: base, upstream: embedded ? "embedded" : upstreamUrl }, "adapter listening");
const workspace = config.upstream.defaultWorkspace ?? "<workspace-id>";
process.stdout.write(
  `\nworkspace-openai-adapter is serving ${base}${embedded ? " (against the embedded workspace)" : ""}\n` +
    (config.server.playground ? `Open the playground in a browser: ${listening}/\n` : "") +
    "Try it:\n\n" +
    `curl -s ${base}/chat/completions \\\n` +
    `  -H "Authorization: Bearer ${embedded ? "any-key-works-locally" : "$WORKSPACE_API_KEY"}" \\\n` +
    `  -H "Service-Workspace: ${workspace}" \\\n` +
    "  -H \"Content-Type: application/json\" \\\n" +
    "  -d '{\"model\": \"ask\", \"messages\": [{\"role\": \"user\", \"content\": \"How does the adapter cite sources?\"}]}'\n\n",
);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    adapter.logger.info({ signal, graceMs: config.server.shutdownGraceMs }, "shutting down: draining requests");
    void running
      .shutdown()
      .then(() => embedded?.close())
      .then(() => tracing?.shutdown())
      .then(() => {
        adapter.logger.info("stopped");
        process.exit(0);
      });
  });
}
