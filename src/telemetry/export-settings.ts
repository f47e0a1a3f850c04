import { type Environment, variable } from "./tracing-environment.js";

/**
 * How finished spans are batched and sent (the batch span processor's standard variables,
 * `OTEL_BSP_*`): at most `maxQueueSize` spans wait (more are dropped and counted), a batch
 * leaves once `maxExportBatchSize` are waiting or `scheduledDelayMillis` after the last one,
 * and an export that has not answered after `exportTimeoutMillis` counts as failed.
 */
export interface BatchSettings {
  maxQueueSize: number;
  maxExportBatchSize: number;
  scheduledDelayMillis: number;
  exportTimeoutMillis: number;
}

/**
 * The span limits of the specification (`OTEL_SPAN_*_LIMIT`, `OTEL_ATTRIBUTE_*_LIMIT`): what a
 * span carries at most; the rest is dropped and counted in the span's `dropped_*_count`.
 */
export interface SpanLimits {
  attributeCount: number;
  /** Longer strings are cut to this many characters (unlimited by default). */
  attributeValueLength: number;
  eventCount: number;
  linkCount: number;
  attributePerEvent: number;
  attributePerLink: number;
}

/** The batch span processor's variables and their defaults (the specification's). */
const BATCH_VARIABLES = {
  maxQueueSize: ["OTEL_BSP_MAX_QUEUE_SIZE", 2048],
  maxExportBatchSize: ["OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512],
  scheduledDelayMillis: ["OTEL_BSP_SCHEDULE_DELAY", 5000],
  exportTimeoutMillis: ["OTEL_BSP_EXPORT_TIMEOUT", 30000],
} as const;

/**
 * Reads `OTEL_BSP_*`; a value that is not a positive integer is warned about and replaced by the
 * default, and a batch larger than the queue is cut to the queue's size (as the SDK does).
 */
export function readBatchSettings(env: Environment, warnings: string[]): BatchSettings {
  const read = (key: keyof typeof BATCH_VARIABLES) => {
    const [name, fallback] = BATCH_VARIABLES[key];
    return positiveInteger(env, name, fallback, warnings);
  };
  const settings: BatchSettings = {
    maxQueueSize: read("maxQueueSize"),
    maxExportBatchSize: read("maxExportBatchSize"),
    scheduledDelayMillis: read("scheduledDelayMillis"),
    exportTimeoutMillis: read("exportTimeoutMillis"),
  };
  if (settings.maxExportBatchSize > settings.maxQueueSize) {
    warnings.push(`OTEL_BSP_MAX_EXPORT_BATCH_SIZE=${settings.maxExportBatchSize} is above OTEL_BSP_MAX_QUEUE_SIZE; using ${settings.maxQueueSize}`);
    settings.maxExportBatchSize = settings.maxQueueSize;
  }
  return settings;
}

/** Reads the span limits: the span-specific variable wins over the general attribute one. */
export function readSpanLimits(env: Environment, warnings: string[]): SpanLimits {
  const count = (name: string, fallback: number) => positiveInteger(env, name, fallback, warnings, true);
  const attributeCount = count("OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", count("OTEL_ATTRIBUTE_COUNT_LIMIT", 128));
  return {
    attributeCount,
    attributeValueLength: count("OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", count("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", Infinity)),
    eventCount: count("OTEL_SPAN_EVENT_COUNT_LIMIT", 128),
    linkCount: count("OTEL_SPAN_LINK_COUNT_LIMIT", 128),
    attributePerEvent: count("OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT", 128),
    attributePerLink: count("OTEL_LINK_ATTRIBUTE_COUNT_LIMIT", 128),
  };
}

/** The SDK's own limits when no variable sets them. */
export const DEFAULT_SPAN_LIMITS: SpanLimits = readSpanLimits({}, []);

function positiveInteger(env: Environment, name: string, fallback: number, warnings: string[], zeroAllowed = false): number {
  const raw = variable(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (Number.isInteger(value) && (value > 0 || (zeroAllowed && value === 0))) return value;
  warnings.push(`${name}=${raw} is not a ${zeroAllowed ? "whole number" : "positive whole number"}; using ${fallback}`);
  return fallback;
}
