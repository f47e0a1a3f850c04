import { randomUUID } from "node:crypto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { type Sampler, TracerProvider } from "@opentelemetry/sdk-trace";
import { type ExportPipeline, exportPipeline } from "../../src/telemetry/export-pipeline.js";
import { tracingOver } from "../../src/telemetry/otel-tracing.js";
import { adapterResource, SCOPE } from "../../src/telemetry/otlp-conventions.js";
import type { Tracing } from "../../src/telemetry/tracing.js";

/**
 * Runs `build` with `variables` set in the environment, then puts the environment back: the SDK's
 * exporters read their settings (endpoint, protocol, headers, compression) from it when they are
 * built, synchronously, so tests running side by side in one process do not see each other's.
 */
export function withEnvironment<T>(variables: Record<string, string>, build: () => T): T {
  const saved = Object.fromEntries(Object.keys(variables).map((name) => [name, process.env[name]]));
  Object.assign(process.env, variables);
  try {
    return build();
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

/** Tracing in this process on a tracer provider of its own (not registered globally: every test file of a worker shares the process). */
export interface LocalTracing {
  tracing: Tracing;
  pipeline: ExportPipeline;
  provider: TracerProvider;
}

/**
 * The adapter's tracing as `startTracing` sets it up for a process, but on a provider of its own:
 * the production export pipeline (export-pipeline.ts) built from `variables` (the endpoint, the
 * batch processor's and exporter's variables), under the resource `main.ts` gives, with the
 * sampler given (parent-based always-on by default).
 */
export function localTracing(
  variables: Record<string, string>,
  options: { capturesContent?: boolean; sampler?: Sampler; onExportError?: (message: string) => void } = {},
): LocalTracing {
  const pipeline = withEnvironment(variables, () => exportPipeline(options.onExportError ?? (() => undefined)));
  const provider = new TracerProvider({
    // As `main.ts` has it, less the detectors': an instance id of its own (the SDK's detector gives one per process).
    resource: adapterResource("test").merge(resourceFromAttributes({ "service.instance.id": randomUUID() })),
    spanProcessors: [pipeline.processor],
    ...(options.sampler ? { sampler: options.sampler } : {}),
  });
  const tracing = tracingOver({
    tracer: provider.getTracer(SCOPE, "test"),
    capturesContent: options.capturesContent ?? false,
    dropped: () => pipeline.dropped,
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  });
  return { tracing, pipeline, provider };
}
