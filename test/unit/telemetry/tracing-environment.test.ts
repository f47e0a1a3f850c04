import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { TRACING_VARIABLES } from "../../../src/config/tracing-settings.js";
import { checkEndpoints, TracingSettingsError, tracingRequested } from "../../../src/telemetry/tracing-environment.js";

// The standard variables: whether tracing starts, and who reads each one the docs list (docs/observability.md#tracing).

describe("whether tracing starts", () => {
  it("starts with an OTLP endpoint, general or for traces, and not otherwise", () => {
    expect(tracingRequested({})).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: "" })).toBe(false);
    expect(tracingRequested({ OTEL_SERVICE_NAME: "adapter", OTEL_TRACES_SAMPLER: "always_on" })).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toBe(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://collector:4318/v1/traces" })).toBe(true);
  });

  it("stays off with OTEL_SDK_DISABLED=true (any case) or OTEL_TRACES_EXPORTER=none", () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" };
    expect(tracingRequested({ ...endpoint, OTEL_SDK_DISABLED: "TRUE" })).toBe(false);
    expect(tracingRequested({ ...endpoint, OTEL_SDK_DISABLED: "false" })).toBe(true);
    expect(tracingRequested({ ...endpoint, OTEL_SDK_DISABLED: "yes" })).toBe(true);
    expect(tracingRequested({ ...endpoint, OTEL_TRACES_EXPORTER: "none" })).toBe(false);
  });

  it("refuses an endpoint that is no http(s) URL, naming the variable", () => {
    expect(() => checkEndpoints({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://tempo/v1/traces" })).not.toThrow();
    expect(() => checkEndpoints({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })).toThrow(TracingSettingsError);
    expect(() => checkEndpoints({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "not a url" })).toThrow(
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http:// or https:// URL (got "not a url")',
    );
  });
});

/** The text of every module of the SDK's packages the adapter starts tracing with. */
function sdkText(): string {
  const require = createRequire(import.meta.url);
  const packages = [
    "@opentelemetry/sdk-node",
    "@opentelemetry/exporter-trace-otlp-proto",
    "@opentelemetry/exporter-trace-otlp-http",
    "@opentelemetry/exporter-trace-otlp-grpc",
    "@opentelemetry/otlp-exporter-base",
    "@opentelemetry/resources",
    "@opentelemetry/core",
  ];
  const texts: string[] = [];
  for (const name of packages) {
    const dist = dirname(require.resolve(name));
    for (const entry of readdirSync(dist, { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && entry.name.endsWith(".mjs")) texts.push(readFileSync(join(entry.parentPath, entry.name), "utf8"));
    }
  }
  // OTLP exporters build a signal's variables from a template (`OTEL_EXPORTER_OTLP_${signal}_HEADERS`).
  const grpcBase = dirname(createRequire(require.resolve("@opentelemetry/exporter-trace-otlp-grpc")).resolve("@opentelemetry/otlp-grpc-exporter-base"));
  for (const entry of readdirSync(grpcBase, { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && entry.name.endsWith(".mjs")) texts.push(readFileSync(join(entry.parentPath, entry.name), "utf8"));
  }
  return texts.join("\n");
}

/** The adapter's own code that reads the variables (src/telemetry; the table lives in src/config). */
function adapterText(): string {
  const telemetry = join(dirname(fileURLToPath(import.meta.url)), "../../../src/telemetry");
  return readdirSync(telemetry)
    .map((file) => readFileSync(join(telemetry, file), "utf8"))
    .join("\n");
}

describe("the table of variables", () => {
  it("says who reads each one, and the SDK (or the adapter) reads every one it lists", () => {
    const sdk = sdkText();
    const adapter = adapterText();
    // A signal's own variable is read through the exporters' template: `OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`.
    const readsBySignal = (name: string) => {
      const setting = /^OTEL_EXPORTER_OTLP_TRACES_(\w+)$/.exec(name)?.[1];
      return setting !== undefined && new RegExp(`\`OTEL_EXPORTER_OTLP_\\$\\{\\w+\\}_${setting}\``).test(sdk);
    };
    for (const { name, readBy } of TRACING_VARIABLES) {
      const read = sdk.includes(`"${name}"`) || sdk.includes(`'${name}'`) || readsBySignal(name);
      if (readBy !== "adapter") expect(read, `the SDK reads ${name}`).toBe(true);
      if (readBy !== "sdk") expect(adapter.includes(`"${name}"`), `the adapter reads ${name}`).toBe(true);
    }
  });
});
