import { trace, type TracerProvider } from "@opentelemetry/api";
import { CONTEXT_FRAME_FLAG, nodeFlags } from "./context-frame.js";
import { checkEndpoints, isTrue, tracingRequested } from "./tracing-environment.js";
import type { TracingStart } from "./tracing.js";

/** What tracing needs beside the environment. */
export interface TracingOptions {
  /** `service.version` of the resource, and the version of the adapter's instrumentation scope. */
  serviceVersion: string;
  /**
   * Told what the log should say about export: failed exports (the first failure, then at most
   * one line a minute with how many failed meanwhile, and once when exports succeed again), and
   * spans dropped because the exporter cannot keep up (at most a line a minute).
   */
  onExportError?: (message: string) => void;
}

/**
 * Starts tracing as the process's environment asks (docs/observability.md#tracing):
 * - the process already has OpenTelemetry (a platform's instrumentation registered a global tracer
 *   provider, e.g. `node --import @opentelemetry/auto-instrumentations-node/register`): the adapter
 *   traces on it, with its propagators and its export, and sets up nothing of its own
 *   (otel-tracing.ts `platformTracing`);
 * - else, an OTLP endpoint is set (`OTEL_EXPORTER_OTLP_ENDPOINT`): the adapter sets up the SDK
 *   (`sdk-tracing.ts`) and registers it for the process;
 * - else tracing is off, and nothing of OpenTelemetry's SDK is loaded (every part is loaded here, on demand).
 * Throws `TracingSettingsError` for settings tracing cannot work with (an endpoint that is no URL).
 */
export async function startTracing(options: TracingOptions): Promise<TracingStart> {
  const env = process.env;
  const capturesContent = isTrue(env, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT");
  const platform = registeredProvider();
  if (platform) {
    const { platformTracing } = await import("./otel-tracing.js");
    return platformTracing(platform, options.serviceVersion, capturesContent);
  }
  if (!tracingRequested(env)) return { tracing: undefined, summary: "tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT)", warnings: [] };
  checkEndpoints(env);
  const { ownTracing } = await import("./sdk-tracing.js");
  const started = ownTracing(options, capturesContent);
  const hint = promiseHooksHint(env);
  if (hint) started.warnings.push(hint);
  return started;
}

/**
 * What the log says when the context manager will run on promise hooks, which slow every promise
 * (measured on Node 22: tracing's added CPU per chat request 109 µs on them, 78 µs on context
 * frames, bench part `tracing`): Node 22 does unless started with `--experimental-async-context-frame`
 * (`main.ts` executes itself again with it, src/telemetry/context-frame.ts), Node 24 only when
 * started with `--no-async-context-frame`.
 */
function promiseHooksHint(env: NodeJS.ProcessEnv): string | undefined {
  const node = process.versions.node;
  const flags = nodeFlags({ env, execArgv: process.execArgv });
  const why = "which slow every promise while tracing is on";
  const gain = "for about 30 % less tracing CPU (docs/observability.md#what-tracing-costs)";
  if (Number(node.split(".")[0]) < 24) {
    if (flags.includes(CONTEXT_FRAME_FLAG)) return undefined;
    return `Node ${node} carries the trace context on promise hooks, ${why}; start node with ${CONTEXT_FRAME_FLAG} ${gain}`;
  }
  if (!flags.includes("--no-async-context-frame")) return undefined;
  return `Node ${node} was started with --no-async-context-frame and carries the trace context on promise hooks, ${why}; start it without ${gain}`;
}

/**
 * The tracer provider registered for the process, if one is: the API hands out a proxy whose
 * delegate is the registered provider, and gives no tracer of a delegate before one is set.
 */
function registeredProvider(): TracerProvider | undefined {
  type Proxy = TracerProvider & { getDelegateTracer?: (name: string) => unknown; getDelegate?: () => TracerProvider };
  const provider: Proxy = trace.getTracerProvider();
  if (typeof provider.getDelegateTracer !== "function") return provider;
  return provider.getDelegateTracer("workspace-openai-adapter") === undefined ? undefined : (provider.getDelegate?.() ?? provider);
}
