import { execFile, spawn } from "node:child_process";
import { join } from "node:path";
import { Writable } from "node:stream";
import { promisify } from "node:util";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import { projectRoot } from "../../../src/util/package-info.js";
import { type OtlpReceiver, startOtlpReceiver } from "../../helpers/otlp-receiver.js";
import { startRecordingProxy } from "../../helpers/recording-proxy.js";
import { API_KEY, chatBody, FIXTURE_DOCUMENTS, headers, startAdapter } from "../../helpers/start-stack.js";
import { startTracedProcess } from "../../helpers/traced-process.js";
import { waitFor } from "../../helpers/wait-for.js";

// Tracing as `main.ts` starts it (the compiled entry point), and what tracing off leaves out.

const run = promisify(execFile);
const root = projectRoot();

/**
 * How many modules of the OpenTelemetry SDK a process loaded after starting tracing from `env` and
 * building an adapter, seen by a module hook (the SDK's 3.x lines are ES modules, which never enter
 * `require.cache`). (`@opentelemetry/api` is not counted: prom-client loads it whenever it is
 * installed, tracing or not, to offer exemplars.)
 */
async function loadedModules(env: Record<string, string>): Promise<{ on: boolean; loaded: number }> {
  const script = `
    import { registerHooks } from "node:module";
    const sdk = new Set();
    registerHooks({
      load(url, context, nextLoad) {
        if (url.includes("/@opentelemetry/") && !url.includes("/@opentelemetry/api/")) sdk.add(url);
        return nextLoad(url, context);
      },
    });
    const { loadConfig } = await import(${JSON.stringify(join(root, "dist/src/config/config.js"))});
    const { createAdapter } = await import(${JSON.stringify(join(root, "dist/src/server/create-adapter.js"))});
    const { startTracing } = await import(${JSON.stringify(join(root, "dist/src/telemetry/start-tracing.js"))});
    const { tracing } = await startTracing({ serviceVersion: "test" });
    const adapter = createAdapter(loadConfig({ LOG_LEVEL: "silent" }), "http://127.0.0.1:9", { tracing });
    process.stdout.write(JSON.stringify({ on: tracing !== undefined, loaded: sdk.size }));
    await adapter.close();
    await tracing?.shutdown();`;
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: root, env: { PATH: process.env.PATH ?? "", ...env }, timeout: 30_000 });
  return JSON.parse(stdout) as { on: boolean; loaded: number };
}

describe("tracing off", () => {
  it("loads nothing of the OpenTelemetry SDK (on, it is loaded)", async () => {
    expect(await loadedModules({})).toEqual({ on: false, loaded: 0 });
    expect(await loadedModules({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_SDK_DISABLED: "true" })).toEqual({ on: false, loaded: 0 });
    const on = await loadedModules({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9" });
    expect(on.on).toBe(true);
    expect(on.loaded).toBeGreaterThan(10);
  }, 60_000);

  it("sends no trace context upstream and writes no trace ids in the logs", async () => {
    const workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], apiKeys: [API_KEY], stepDelayMs: 0 });
    const upstream = await startRecordingProxy(workspace.url);
    const lines: string[] = [];
    const logger = pino({ level: "info" }, new Writable({ write: (chunk: Buffer, _encoding, done) => done(void lines.push(chunk.toString())) }));
    const adapter = await startAdapter(upstream.url, {}, logger);
    try {
      const response = await fetch(`${adapter.url}/v1/chat/completions`, {
        method: "POST",
        headers: headers({ traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" }),
        body: JSON.stringify(chatBody("What is the travel policy?")),
      });
      expect(response.status).toBe(200);
      await response.text();
      expect(upstream.requests.length).toBeGreaterThan(0);
      expect(upstream.requests.filter((request) => request.headers.traceparent !== undefined)).toEqual([]);
      // The request's log line is written as the response closes.
      await waitFor(() => lines.join("").includes('"msg":"request"'), "the request's log line");
      expect(lines.join("")).not.toContain("trace_id");
    } finally {
      await adapter.close();
      await upstream.close();
      await workspace.close();
    }
  });
});

describe("main.ts with OTEL_EXPORTER_OTLP_ENDPOINT", () => {
  let receiver: OtlpReceiver;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
  });

  it("traces, logs with trace ids, and exports what is buffered when it shuts down", async () => {
    const child = spawn(process.execPath, [join(root, "dist/src/main.js")], {
      cwd: root,
      env: {
        ...process.env,
        WORKSPACE_BASE_URL: "",
        PORT: "0",
        LOG_FORMAT: "json",
        EMBEDDED_STEP_DELAY_MS: "0",
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_SERVICE_NAME: "adapter-main",
        // Nothing leaves before shutdown: the spans below arrive only through the flush on SIGTERM.
        OTEL_BSP_SCHEDULE_DELAY: "600000",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const deadline = Date.now() + 45_000; // generous: a busy machine starts a process slowly
    while (!/serving (http:\/\/\S+)\/v1/.test(output) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const base = /serving (http:\/\/\S+)\/v1/.exec(output)?.[1] as string;
    expect(base).toBeDefined();
    const response = await fetch(`${base}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: "Bearer any", "content-type": "application/json" },
      body: JSON.stringify(chatBody("How does the adapter cite sources?")),
    });
    expect(response.status).toBe(200);
    await response.text();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(receiver.spans()).toEqual([]);
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    const spans = receiver.spans();
    const server = spans.find((span) => span.name === "POST /v1/chat/completions");
    expect(server?.resource["service.name"]).toBe("adapter-main");
    expect(spans.find((span) => span.name === "chat ask")?.parentSpanId).toBe(server?.spanId);
    const lines = output
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.find((line) => typeof line.msg === "string" && line.msg.startsWith("tracing on: OTLP http/protobuf to"))).toBeDefined();
    expect(lines.find((line) => line.msg === "request")).toMatchObject({ trace_id: server?.traceId, span_id: server?.spanId });
    // Contexts ride on context frames, not promise hooks: Node 24's default, and on Node 22 the entry
    // point executed itself again with --experimental-async-context-frame (docs/observability.md#what-tracing-costs).
    expect(lines.filter((line) => typeof line.msg === "string" && line.msg.includes("promise hooks"))).toEqual([]);
  }, 60_000);

  it("keeps promise hooks when node is told to, and says what they cost", async () => {
    // The switch that keeps AsyncLocalStorage on promise hooks: Node 22's opt-out of the re-execution, Node 24's own.
    const keepHooks = Number(process.versions.node.split(".")[0]) < 24 ? "--no-experimental-async-context-frame" : "--no-async-context-frame";
    const traced = await startTracedProcess({ nodeArgs: [keepHooks] });
    try {
      const hints = traced.logs.filter((line) => typeof line.msg === "string" && line.msg.includes("carries the trace context on promise hooks"));
      expect(hints).toHaveLength(1);
      expect(hints[0]?.msg).toContain("docs/observability.md#what-tracing-costs");
    } finally {
      await traced.close();
    }
  }, 60_000);

  it("stops with a clear message on an endpoint that is no URL", async () => {
    const result = await run(process.execPath, [join(root, "dist/src/main.js")], {
      cwd: root,
      env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318", PORT: "0" },
      timeout: 20_000,
    }).then(
      () => ({ code: 0, stderr: "" }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL (got "collector:4318")');
  }, 30_000);
});
