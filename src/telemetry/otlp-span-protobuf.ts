import type { Attributes, Link, SpanContext } from "@opentelemetry/api";
import { AttributeCache } from "./attribute-cache.js";
import type { SpanLimits } from "./export-settings.js";
import { type ProtobufWriter, WIRE } from "./protobuf-writer.js";
import { epochTime, type FinishedSpan, serializedState, type SpanEvent, type TraceClock } from "./recorded-span.js";
import type { FactKey, FactValue, FactWriter } from "./span-facts.js";

// OTLP/protobuf (opentelemetry-proto, trace/v1/trace.proto and common/v1/common.proto), written
// field for field as the SDK's serializer writes it (@opentelemetry/otlp-transformer's
// trace-serializer), so that a collector receives the same bytes: test/unit/telemetry/otlp-encoding.test.ts
// compares the two.

/** Span flags: the context's trace flags, and whether the parent was remote (known, so always said). */
const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;

/** ScopeSpans' field of its spans: each span is written as one. */
export const SCOPE_SPANS_SPAN_FIELD = 2;

/**
 * Writes `span` as a `spans` field of ScopeSpans, within the limits (what is over them is dropped
 * and counted). With a cache (the encoder's own), the span's attributes seen before cost a copy.
 */
export function writeProtobufSpan(writer: ProtobufWriter, span: FinishedSpan, limits: SpanLimits, cache?: AttributeCache): void {
  writer.tag(SCOPE_SPANS_SPAN_FIELD, WIRE.bytes);
  const start = writer.begin();
  const { traceFlags } = span.context;
  writeContext(writer, span.context);
  if (span.parent) {
    writer.tag(4, WIRE.bytes);
    writer.hex(span.parent.spanId);
  }
  writer.tag(5, WIRE.bytes);
  writer.string(span.name);
  writer.tag(6, WIRE.varint);
  writer.varint(span.kind + 1);
  writer.tag(7, WIRE.fixed64);
  writeTime(writer, span.clock, span.startTime);
  writer.tag(8, WIRE.fixed64);
  writeTime(writer, span.clock, span.endTime);
  const { attributeCount, attributeValueLength } = limits;
  let written = 0;
  let droppedAttributes = 0;
  if (span.facts) {
    const facts = new ProtobufFacts(writer, attributeCount, attributeValueLength);
    span.facts.write(facts);
    written = facts.written;
    droppedAttributes = facts.dropped;
  }
  droppedAttributes += writeAttributes(writer, span.attributes, 9, attributeCount - written, attributeValueLength, cache);
  writer.tag(10, WIRE.varint);
  writer.varint(droppedAttributes);
  // Over the limit, the oldest events and links are the ones dropped (as the SDK's span drops them).
  const { events, links } = span;
  const firstEvent = Math.max(0, events.length - limits.eventCount);
  for (let index = firstEvent; index < events.length; index += 1) {
    writeEvent(writer, span.clock, events[index] as SpanEvent, limits, cache);
  }
  writer.tag(12, WIRE.varint);
  writer.varint(firstEvent);
  const firstLink = Math.max(0, links.length - limits.linkCount);
  for (let index = firstLink; index < links.length; index += 1) writeLink(writer, links[index] as Link, limits);
  writer.tag(14, WIRE.varint);
  writer.varint(firstLink);
  writer.tag(15, WIRE.bytes);
  const status = writer.begin();
  if (span.statusMessage) {
    writer.tag(2, WIRE.bytes);
    writer.string(span.statusMessage);
  }
  writer.tag(3, WIRE.varint);
  writer.varint(span.statusCode);
  writer.end(status);
  writer.tag(16, WIRE.fixed32);
  writer.fixed32((traceFlags & 0xff) | HAS_IS_REMOTE | (span.parent?.isRemote ? IS_REMOTE : 0));
  writer.end(start);
}

/**
 * Writes the attributes as repeated KeyValue fields numbered `field`: at most `count` of them;
 * returns how many were dropped. With a cache, keys and the values seen again cost a copy. The
 * attributes are plain objects the adapter built: their keys are read without listing them first.
 */
export function writeAttributes(
  writer: ProtobufWriter,
  attributes: Attributes,
  field: number,
  count: number,
  length: number,
  cache?: AttributeCache,
): number {
  let written = 0;
  let dropped = 0;
  for (const key in attributes) {
    const value = attributes[key];
    if (value === undefined) continue;
    if (written >= count) {
      dropped += 1;
      continue;
    }
    written += 1;
    writer.tag(field, WIRE.bytes);
    const cached = cache?.key(key);
    const remembered = cached?.values !== undefined && AttributeCache.remembers(value) && (typeof value !== "string" || value.length <= length);
    const known = remembered ? cached.values?.get(value) : undefined;
    if (known) {
      writer.raw(known);
      continue;
    }
    const pair = writer.begin();
    if (cached) writer.raw(cached.prefix);
    else {
      writer.tag(1, WIRE.bytes);
      writer.string(key);
      writer.tag(2, WIRE.bytes);
    }
    const any = writer.begin();
    writeAnyValue(writer, value, length);
    writer.end(any);
    writer.end(pair);
    if (cached && remembered) AttributeCache.remember(cached, value, writer.buffer.subarray(pair, writer.pos));
  }
  return dropped;
}

/** A span's facts written as its attributes (field 9): each key's start copied, at most `count` of them, strings cut to `length`. */
class ProtobufFacts implements FactWriter {
  written = 0;
  dropped = 0;

  constructor(
    private readonly writer: ProtobufWriter,
    private readonly count: number,
    private readonly length: number,
  ) {}

  fact(key: FactKey, value: FactValue | undefined): void {
    if (value === undefined) return;
    if (this.written >= this.count) {
      this.dropped += 1;
      return;
    }
    this.written += 1;
    const { writer } = this;
    writer.tag(9, WIRE.bytes);
    const pair = writer.begin();
    writer.raw(key.prefix);
    const any = writer.begin();
    writeAnyValue(writer, value, this.length);
    writer.end(any);
    writer.end(pair);
  }
}

/** An AnyValue's fields: string 1, bool 2, int 3, double 4, array 5, key-value list 6, bytes 7 (strings and bytes cut to `length`). */
function writeAnyValue(writer: ProtobufWriter, value: unknown, length: number): void {
  switch (typeof value) {
    case "string":
      writer.tag(1, WIRE.bytes);
      writer.string(value.length > length ? value.substring(0, length) : value);
      return;
    case "boolean":
      writer.tag(2, WIRE.varint);
      writer.varint(value ? 1 : 0);
      return;
    case "number":
      if (Number.isInteger(value) && value >= -(2 ** 63) && value < 2 ** 63) {
        writer.tag(3, WIRE.varint);
        writer.varint(value);
      } else {
        writer.tag(4, WIRE.fixed64);
        writer.double(value);
      }
      return;
    case "object":
      break;
    default:
      return;
  }
  if (value === null) return;
  if (value instanceof Uint8Array) {
    writer.tag(7, WIRE.bytes);
    writer.bytes(value.length > length ? value.subarray(0, length) : value);
    return;
  }
  if (Array.isArray(value)) {
    writer.tag(5, WIRE.bytes);
    const array = writer.begin();
    for (const item of value) {
      writer.tag(1, WIRE.bytes);
      const element = writer.begin();
      writeAnyValue(writer, item, length);
      writer.end(element);
    }
    writer.end(array);
    return;
  }
  writer.tag(6, WIRE.bytes);
  const list = writer.begin();
  writeAttributes(writer, value as Attributes, 1, Infinity, length);
  writer.end(list);
}

function writeEvent(
  writer: ProtobufWriter,
  clock: TraceClock,
  event: SpanEvent,
  limits: SpanLimits,
  cache?: AttributeCache,
): void {
  writer.tag(11, WIRE.bytes);
  const start = writer.begin();
  writer.tag(1, WIRE.fixed64);
  writeTime(writer, clock, event.time);
  writer.tag(2, WIRE.bytes);
  writer.string(event.name);
  const { attributes } = event;
  const { attributePerEvent, attributeValueLength } = limits;
  const dropped = attributes ? writeAttributes(writer, attributes, 3, attributePerEvent, attributeValueLength, cache) : 0;
  writer.tag(4, WIRE.varint);
  writer.varint(dropped);
  writer.end(start);
}

function writeLink(writer: ProtobufWriter, link: Link, limits: SpanLimits): void {
  writer.tag(13, WIRE.bytes);
  const start = writer.begin();
  const { traceFlags, isRemote } = link.context;
  writeContext(writer, link.context);
  const { attributes } = link;
  const dropped = attributes ? writeAttributes(writer, attributes, 4, limits.attributePerLink, limits.attributeValueLength) : 0;
  writer.tag(5, WIRE.varint);
  writer.varint(dropped);
  writer.tag(6, WIRE.fixed32);
  writer.fixed32((traceFlags & 0xff) | HAS_IS_REMOTE | (isRemote ? IS_REMOTE : 0));
  writer.end(start);
}

/** A span's or a link's trace id (field 1), span id (2) and trace state (3, when there is one): the same fields in both messages. */
function writeContext(writer: ProtobufWriter, context: SpanContext): void {
  writer.tag(1, WIRE.bytes);
  writer.hex(context.traceId);
  writer.tag(2, WIRE.bytes);
  writer.hex(context.spanId);
  const state = serializedState(context.traceState);
  if (state) {
    writer.tag(3, WIRE.bytes);
    writer.string(state);
  }
}

function writeTime(writer: ProtobufWriter, clock: TraceClock, time: number): void {
  const [seconds, nanos] = epochTime(clock, time);
  writer.nanos(seconds, nanos);
}
