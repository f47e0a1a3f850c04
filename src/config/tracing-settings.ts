// The standard variables of tracing, as the settings' documentation shows them (config-docs.ts);
// src/telemetry reads those marked `adapter` or `both`; the SDK, the rest.

/** One standard variable of tracing, as docs/observability.md's table and `--help` show it, and who reads it. */
export interface TracingVariable {
  name: string;
  shown: string;
  meaning: string;
  /** `sdk`: OpenTelemetry's SDK reads it (the exporter, `NodeSDK`); `adapter`: the adapter does; `both`: the adapter too, to decide whether tracing starts. */
  readBy: "sdk" | "adapter" | "both";
}

/**
 * The standard variables of tracing (the OpenTelemetry specification's names and meanings, not
 * the adapter's), when the adapter sets OpenTelemetry up itself: no flag sets them, the environment
 * alone. The SDK reads more (the exporter's timeout, compression and certificates, span limits);
 * docs/observability.md lists them. Under a platform's instrumentation its SDK reads them all.
 */
export const TRACING_VARIABLES: readonly TracingVariable[] = [
  {
    name: "OTEL_EXPORTER_OTLP_ENDPOINT",
    shown: "unset (tracing off)",
    meaning: "Base URL of an OTLP receiver (a collector's port 4318 for HTTP, 4317 for gRPC; a vendor's endpoint); over HTTP `v1/traces` is appended. Setting it turns tracing on",
    readBy: "both",
  },
  {
    name: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    shown: "unset",
    meaning: "The full URL spans are sent to, used as it is; wins over the base endpoint, and also turns tracing on",
    readBy: "both",
  },
  {
    name: "OTEL_EXPORTER_OTLP_PROTOCOL",
    shown: "`http/protobuf`",
    meaning: "`http/protobuf`, `http/json` or `grpc` (`OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` wins)",
    readBy: "adapter",
  },
  {
    name: "OTEL_EXPORTER_OTLP_HEADERS",
    shown: "unset",
    meaning: "Headers sent with every export, `key=value,key2=value2` (values URL-encoded), e.g. a vendor's API key; `OTEL_EXPORTER_OTLP_TRACES_HEADERS` adds to them and wins",
    readBy: "sdk",
  },
  { name: "OTEL_SERVICE_NAME", shown: "`workspace-openai-adapter`", meaning: "`service.name` of every span's resource", readBy: "sdk" },
  {
    name: "OTEL_RESOURCE_ATTRIBUTES",
    shown: "unset",
    meaning: "More resource attributes, `key=value,…` (e.g. `deployment.environment.name=prod`); `OTEL_SERVICE_NAME` wins for `service.name`",
    readBy: "sdk",
  },
  {
    name: "OTEL_NODE_RESOURCE_DETECTORS",
    shown: "all of them",
    meaning: "Which resource detectors run: `env`, `host`, `os`, `process`, `serviceinstance`, `all` or `none`, comma-separated",
    readBy: "sdk",
  },
  {
    name: "OTEL_PROPAGATORS",
    shown: "`tracecontext,baggage`",
    meaning: "How trace context is read from callers and sent to the workspace service: `tracecontext`, `baggage`, `b3` (one header), `b3multi` (`X-B3-*` headers) or `none`, comma-separated",
    readBy: "sdk",
  },
  {
    name: "OTEL_TRACES_SAMPLER",
    shown: "`parentbased_always_on`",
    meaning: "`always_on`, `always_off`, `traceidratio`, `parentbased_always_on`, `parentbased_always_off` or `parentbased_traceidratio`",
    readBy: "sdk",
  },
  { name: "OTEL_TRACES_SAMPLER_ARG", shown: "`1.0`", meaning: "The ratio of the `traceidratio` samplers, from 0 to 1", readBy: "sdk" },
  {
    name: "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
    shown: "`false`",
    meaning: "`true` puts prompts and answers on the answer spans (`gen_ai.input.messages`, `gen_ai.output.messages`); off, no message content is recorded",
    readBy: "adapter",
  },
  {
    name: "OTEL_BSP_MAX_QUEUE_SIZE",
    shown: "`2048`",
    meaning: "Spans waiting at most to be sent; beyond it spans are dropped and counted (`adapter_trace_spans_dropped_total`)",
    readBy: "adapter",
  },
  { name: "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", shown: "`512`", meaning: "Spans sent at most in one export; a batch leaves as soon as it is full", readBy: "adapter" },
  { name: "OTEL_BSP_SCHEDULE_DELAY", shown: "`5000`", meaning: "Milliseconds a smaller batch waits before it is sent", readBy: "adapter" },
  { name: "OTEL_BSP_EXPORT_TIMEOUT", shown: "`30000`", meaning: "Milliseconds after which an export that has not answered counts as failed", readBy: "adapter" },
  { name: "OTEL_SDK_DISABLED", shown: "`false`", meaning: "`true` turns tracing off whatever else is set", readBy: "both" },
  { name: "OTEL_TRACES_EXPORTER", shown: "`otlp`", meaning: "`none` turns tracing off", readBy: "adapter" },
  { name: "OTEL_LOG_LEVEL", shown: "unset", meaning: "The SDK's own diagnostics, written to the console: `error`, `warn`, `info`, `debug`…", readBy: "sdk" },
];
