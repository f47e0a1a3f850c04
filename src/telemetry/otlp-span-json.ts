import type { Attributes, Link } from "@opentelemetry/api";
import type { SpanLimits } from "./export-settings.js";
import type { ProtobufWriter } from "./protobuf-writer.js";
import { allAttributes, epochTime, type FinishedSpan, type SpanEvent, type TraceClock } from "./recorded-span.js";

// OTLP/JSON (the protocol's JSON mapping: hex ids, nanosecond times as strings), in the shape and
// key order the SDK's JSON serializer gives (@opentelemetry/otlp-transformer's
// createExportTraceServiceRequest), so that a collector receives the same text:
// test/unit/telemetry/otlp-encoding.test.ts compares the two.

type Json = Record<string, unknown>;

const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;

/** `span` as an OTLP/JSON Span object, within the limits (what is over them is dropped and counted). */
export function jsonSpan(span: FinishedSpan, limits: SpanLimits): Json {
  const { traceId, spanId, traceFlags, traceState } = span.context;
  const length = limits.attributeValueLength;
  const attributes = jsonAttributes(allAttributes(span), limits.attributeCount, length);
  const firstEvent = Math.max(0, span.events.length - limits.eventCount);
  const firstLink = Math.max(0, span.links.length - limits.linkCount);
  return {
    traceId,
    spanId,
    parentSpanId: span.parent?.spanId,
    traceState: traceState?.serialize(),
    name: span.name,
    kind: span.kind + 1,
    startTimeUnixNano: jsonTime(span.clock, span.startTime),
    endTimeUnixNano: jsonTime(span.clock, span.endTime),
    attributes: attributes.list,
    droppedAttributesCount: attributes.dropped,
    events: span.events.slice(firstEvent).map((event) => jsonEvent(span.clock, event, limits)),
    droppedEventsCount: firstEvent,
    status: { code: span.statusCode, message: span.statusMessage },
    links: span.links.slice(firstLink).map((link) => jsonLink(link, limits)),
    droppedLinksCount: firstLink,
    flags: (traceFlags & 0xff) | HAS_IS_REMOTE | (span.parent?.isRemote ? IS_REMOTE : 0),
  };
}

/** Attributes as OTLP/JSON KeyValues: at most `count` of them, strings cut to `length`; and how many were dropped. */
export function jsonAttributes(attributes: Attributes, count: number, length: number): { list: Json[]; dropped: number } {
  const list: Json[] = [];
  let dropped = 0;
  for (const key in attributes) {
    const value = attributes[key];
    if (value === undefined || !Object.hasOwn(attributes, key)) continue;
    if (list.length >= count) dropped += 1;
    else list.push({ key, value: jsonValue(value, length) });
  }
  return { list, dropped };
}

function jsonValue(value: unknown, length: number): Json {
  switch (typeof value) {
    case "string":
      return { stringValue: value.length > length ? value.substring(0, length) : value };
    case "number":
      return Number.isInteger(value) ? { intValue: value } : { doubleValue: value };
    case "boolean":
      return { boolValue: value };
    case "object":
      break;
    default:
      return {};
  }
  if (value === null) return {};
  if (value instanceof Uint8Array) return { bytesValue: Buffer.from(value.subarray(0, length)).toString("base64") };
  if (Array.isArray(value)) return { arrayValue: { values: value.map((item) => jsonValue(item, length)) } };
  return { kvlistValue: { values: jsonAttributes(value as Attributes, Infinity, length).list } };
}

function jsonEvent(clock: TraceClock, event: SpanEvent, limits: SpanLimits): Json {
  const attributes = jsonAttributes(event.attributes ?? {}, limits.attributePerEvent, limits.attributeValueLength);
  const timeUnixNano = jsonTime(clock, event.time);
  return { attributes: attributes.list, name: event.name, timeUnixNano, droppedAttributesCount: attributes.dropped };
}

function jsonLink(link: Link, limits: SpanLimits): Json {
  const { traceId, spanId, traceFlags, traceState, isRemote } = link.context;
  const attributes = jsonAttributes(link.attributes ?? {}, limits.attributePerLink, limits.attributeValueLength);
  return {
    attributes: attributes.list,
    spanId,
    traceId,
    traceState: traceState?.serialize(),
    droppedAttributesCount: attributes.dropped,
    flags: (traceFlags & 0xff) | HAS_IS_REMOTE | (isRemote ? IS_REMOTE : 0),
  };
}

function jsonTime(clock: TraceClock, time: number): string {
  const [seconds, nanos] = epochTime(clock, time);
  return (BigInt(seconds) * 1_000_000_000n + BigInt(nanos)).toString();
}

/** Appends `span` to a chunk of OTLP/JSON spans: a comma, then the span (`ExportRequests` drops a chunk's first comma). */
export function writeJsonSpan(writer: ProtobufWriter, span: FinishedSpan, limits: SpanLimits): void {
  const text = `,${JSON.stringify(jsonSpan(span, limits))}`;
  writer.ensure(text.length * 3);
  writer.pos += writer.buffer.write(text, writer.pos, "utf8");
}
