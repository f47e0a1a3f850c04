import { describe, expect, it } from "vitest";
import { spanSampling } from "../../../src/telemetry/span-sampling.js";
import { readTracingSettings } from "../../../src/telemetry/tracing-settings.js";

// OTEL_TRACES_SAMPLER as the specification defines the samplers (docs/observability.md#tracing).

const ENDPOINT = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" };
const sampling = (sampler: string, ratio = "1") => spanSampling(readTracingSettings({ ...ENDPOINT, OTEL_TRACES_SAMPLER: sampler, OTEL_TRACES_SAMPLER_ARG: ratio }));
const LOW = "00000000000000000000000000000001"; // a trace id the ratio sampler keeps at any ratio above 0
const HIGH = "ffffffff000000000000000000000000"; // and drops below 1 (the SDK XORs its four 32-bit parts)
const parent = (sampled: boolean, isRemote = false) => ({ traceId: HIGH, spanId: "b7ad6b7169203331", traceFlags: sampled ? 1 : 0, isRemote });
const decide = (sample: ReturnType<typeof sampling>, traceId: string, of?: ReturnType<typeof parent>) => sample(traceId, "span", 0, {}, [], of);

describe("the samplers", () => {
  it("parent-based: a span with a parent, remote or local, follows the parent's flag; a root asks the root sampler", () => {
    const ratio = sampling("parentbased_traceidratio", "0.5");
    expect(decide(ratio, HIGH, parent(true))).toBe(true);
    expect(decide(ratio, LOW, parent(false, true))).toBe(false);
    expect(decide(ratio, LOW)).toBe(true);
    expect(decide(ratio, HIGH)).toBe(false);
    expect(decide(sampling("parentbased_always_off"), LOW)).toBe(false);
    expect(decide(sampling("parentbased_always_off"), LOW, parent(true))).toBe(true);
    expect(decide(sampling("parentbased_always_on"), LOW, parent(false))).toBe(false);
  });

  it("not parent-based: every span is decided alone, by its trace id for the ratio", () => {
    expect(decide(sampling("traceidratio", "0.5"), HIGH, parent(true))).toBe(false);
    expect(decide(sampling("traceidratio", "0.5"), LOW, parent(false))).toBe(true);
    expect(decide(sampling("always_on"), HIGH, parent(false))).toBe(true);
    expect(decide(sampling("always_off"), LOW, parent(true))).toBe(false);
  });
});
