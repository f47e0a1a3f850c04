#!/usr/bin/env node
import { accessSync, constants } from "node:fs";
import type { AddressInfo } from "node:net";
import { parseCommandLine } from "./config/command-line.js";
import { packageVersion } from "./util/package-info.js";
import { type Config, ConfigError, loadConfig } from "./config/config.js";
import { createAdapter } from "./server/create-adapter.js";
import { startServer } from "./server/start-server.js";
import { documentReader } from "./embedded-workspace/read-document.js";
import { createLogger } from "./util/create-logger.js";
import { errorMessage } from "./util/error-message.js";
import { carriesUserInfo, redactUrl, redactUrlsIn } from "./util/redact-url.js";
import { contextFrameRelaunch } from "./telemetry/context-frame.js";
import { startTracing } from "./telemetry/start-tracing.js";
import { traceLogMixin, type TracingStart } from "./telemetry/tracing.js";
import { TracingSettingsError } from "./telemetry/tracing-environment.js";
import {
  defaultDocuments,
  type RunningWorkspace,
  startEmbeddedWorkspace,
} from "./embedded-workspace/start-embedded-workspace.js";

// The entry point: owns configuration, the port, the embedded workspace and signals.

// `check` probes a live workspace service and exits (docs/check.md); loaded only when asked for.
if (process.argv[2] === "check") {
  const { runCheckCommand } = await import("./check/check-command.js");
  const code = await runCheckCommand(process.argv.slice(3), process.env, process);
  await new Promise((resolve) => process.stdout.write("", resolve));
  process.exit(code);
}

const command = parseCommandLine(process.argv.slice(2), packageVersion());
if (command.kind === "print") {
  (command.exitCode === 0 ? process.stdout : process.stderr).write(command.text);
  process.exit(command.exitCode);
}

// docs/observability.md#what-tracing-costs: on Node 22, a traced adapter runs on async context frames
// (the flag is only read at start-up, so the command executes again with it: same process, nothing opened yet).
const relaunch = contextFrameRelaunch(process);
// execve aborts the process when it fails: only a node binary still there and executable is run (else tracing's hint says what it costs).
if (relaunch && typeof process.execve === "function" && isExecutable(process.execPath)) process.execve(process.execPath, relaunch, process.env);

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
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
const mixin = tracing && traceLogMixin(tracing);
const logger = createLogger({ ...config.log, mixin });
// docs/operating.md#credentials-in-urls: a URL is printed without the credentials it may carry.
for (const warning of traced.warnings) logger.warn(redactUrlsIn(warning));
if (tracing) logger.info(redactUrlsIn(traced.summary));
if (config.upstream.baseUrl && carriesUserInfo(config.upstream.baseUrl)) {
  logger.warn(
    { upstream: redactUrl(config.upstream.baseUrl) },
    "WORKSPACE_BASE_URL carries credentials (user:password@), which are never sent: the workspace is called with each client's key, or WORKSPACE_API_KEY",
  );
}
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

let running: Awaited<ReturnType<typeof startServer>>;
try {
  running = await startServer(adapter, config);
} catch (error) {
  // A port taken (the API's or METRICS_PORT): said in one line, not a stack.
  process.stderr.write(`cannot listen: ${errorMessage(error)}\n`);
  process.exit(1);
}
const { port } = running.server.address() as AddressInfo;
const host = config.server.host === "0.0.0.0" || config.server.host === "::" ? "localhost" : config.server.host;
listening = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
const base = `${listening}/v1`;
adapter.logger.info({ url: base, upstream: embedded ? "embedded" : redactUrl(upstreamUrl) }, "adapter listening");
if (running.metricsUrl) adapter.logger.info({ url: `${running.metricsUrl}/metrics` }, "metrics served on a port of their own (METRICS_PORT)");
const workspace = config.upstream.defaultWorkspace ?? "<workspace-id>";
// Any key works against the embedded workspace, until keys are listed.
const curlKey = config.auth.listing ? "$ADAPTER_API_KEY" : embedded ? "any-key-works-locally" : "$WORKSPACE_API_KEY";
process.stdout.write(
  `\nworkspace-openai-adapter is serving ${base}${embedded ? " (against the embedded workspace)" : ""}\n` +
    (config.server.playground ? `Open the playground in a browser: ${listening}/\n` : "") +
    "Try it:\n\n" +
    `curl -s ${base}/chat/completions \\\n` +
    `  -H "Authorization: Bearer ${curlKey}" \\\n` +
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
