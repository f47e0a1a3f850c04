import { describe, expect, it } from "vitest";
import { TracingSettingsError, tracingRequested } from "../../../src/telemetry/tracing-environment.js";
import { readTracingSettings } from "../../../src/telemetry/tracing-settings.js";

// The standard variables, read as the OpenTelemetry specification says (docs/observability.md).

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
});

describe("the settings", () => {
  it("appends v1/traces to the base endpoint and uses the traces endpoint as it is", () => {
    expect(readTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }).url).toBe("http://collector:4318/v1/traces");
    expect(readTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://otlp.example.com/otlp/" }).url).toBe("https://otlp.example.com/otlp/v1/traces");
    expect(
      readTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://ignored:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://tempo:4318/custom/path" }).url,
    ).toBe("http://tempo:4318/custom/path");
  });

  it("defaults to parent-based always-on sampling, http/protobuf, no headers, no content", () => {
    expect(readTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" })).toEqual({
      url: "http://c:4318/v1/traces",
      protocol: "http/protobuf",
      headers: {},
      sampler: "parentbased_always_on",
      ratio: 1,
      resource: {},
      capturesContent: false,
      warnings: [],
    });
  });

  it("reads protocol, headers (URL-decoded, the traces ones winning), sampler, resource, service name and content capture", () => {
    const settings = readTracingSettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_HEADERS: "x-honeycomb-team=abc%3D%3D, x-shared = one",
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: "x-shared=two",
      OTEL_TRACES_SAMPLER: "ParentBased_TraceIdRatio",
      OTEL_TRACES_SAMPLER_ARG: "0.25",
      OTEL_RESOURCE_ATTRIBUTES: "service.name=from-attributes,deployment.environment.name=prod%20eu",
      OTEL_SERVICE_NAME: "adapter-eu",
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "True",
    });
    expect(settings).toMatchObject({
      protocol: "http/json",
      headers: { "x-honeycomb-team": "abc==", "x-shared": "two" },
      sampler: "parentbased_traceidratio",
      ratio: 0.25,
      resource: { "service.name": "adapter-eu", "deployment.environment.name": "prod eu" },
      capturesContent: true,
      warnings: [],
    });
  });

  it("warns about samplers, ratios and exporters it does not have, and uses the defaults", () => {
    const settings = readTracingSettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
      OTEL_TRACES_SAMPLER: "jaeger_remote",
      OTEL_TRACES_EXPORTER: "zipkin",
    });
    expect(settings.sampler).toBe("parentbased_always_on");
    expect(settings.warnings).toEqual([
      "OTEL_TRACES_EXPORTER=zipkin is not built in; exporting with OTLP",
      "OTEL_TRACES_SAMPLER=jaeger_remote is not built in; using parentbased_always_on",
    ]);
    const ratio = readTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "1.5" });
    expect(ratio).toMatchObject({ sampler: "traceidratio", ratio: 1, warnings: ["OTEL_TRACES_SAMPLER_ARG=1.5 is not a ratio from 0 to 1; using 1.0"] });
  });

  it("refuses what tracing cannot work with, naming the variable", () => {
    expect(() => readTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })).toThrow(TracingSettingsError);
    expect(() => readTracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "not a url" })).toThrow(/OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http/);
    expect(() => readTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4317", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })).toThrow(
      /OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported .*4318/,
    );
  });
});
