import { type Attributes, type Link, ROOT_CONTEXT, SamplingDecision, type SpanContext } from "@opentelemetry/api";
import { AlwaysOffSampler, AlwaysOnSampler, type Sampler, TraceIdRatioBasedSampler } from "@opentelemetry/sdk-trace";
import type { TracingSettings } from "./tracing-settings.js";

/** Whether a span is recorded, as `OTEL_TRACES_SAMPLER` says. */
export type SpanSampling = (
  traceId: string,
  name: string,
  kind: number,
  attributes: Attributes,
  links: Link[],
  parent: SpanContext | undefined,
) => boolean;

/**
 * The sampler `OTEL_TRACES_SAMPLER` names (parent-based, always on, by default). A parent-based
 * sampler with the specification's default delegates follows the parent's sampled flag, remote
 * or local, so a span with a parent is decided by the flag alone and only a root consults the
 * root sampler (the SDK's: always on, always off, or the trace id ratio); the other samplers
 * decide every span by its trace id. None of them reads a context, so none is built.
 */
export function spanSampling(settings: TracingSettings): SpanSampling {
  const decide = samplerOf(settings);
  const parentBased = settings.sampler.startsWith("parentbased_");
  return (traceId, name, kind, attributes, links, parent) => {
    if (parent && parentBased) return (parent.traceFlags & 1) === 1;
    const { decision } = decide.shouldSample(ROOT_CONTEXT, traceId, name, kind, attributes, links);
    return decision === SamplingDecision.RECORD_AND_SAMPLED;
  };
}

/** The sampler deciding roots (parent-based) or every span. */
function samplerOf(settings: TracingSettings): Sampler {
  switch (settings.sampler) {
    case "always_off":
    case "parentbased_always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
    case "parentbased_traceidratio":
      return new TraceIdRatioBasedSampler(settings.ratio);
    default:
      return new AlwaysOnSampler();
  }
}
