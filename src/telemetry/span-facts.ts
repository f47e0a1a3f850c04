import type { Attributes } from "@opentelemetry/api";
import { ProtobufWriter, WIRE } from "./protobuf-writer.js";

/**
 * An attribute key the adapter knows ahead: its name, and the start of its OTLP KeyValue (the key,
 * field 1, and the tag of the value, field 2) encoded once, when the module that names it loads.
 */
export interface FactKey {
  readonly name: string;
  readonly prefix: Uint8Array;
}

/** A key of a span's facts (`SpanFacts`), its KeyValue's start encoded once. */
export function factKey(name: string): FactKey {
  const writer = new ProtobufWriter(name.length * 3 + 8);
  writer.tag(1, WIRE.bytes);
  writer.string(name);
  writer.tag(2, WIRE.bytes);
  return { name, prefix: Uint8Array.from(writer.written()) };
}

/** A fact's value: what the adapter's typed spans record (a list of strings at most; no nested values). */
export type FactValue = string | number | boolean | readonly string[];

/**
 * Where a span's facts go: the OTLP protobuf encoder (`otlp-span-protobuf.ts`), or an attributes
 * object (`factsAsAttributes`) for the JSON encoder and the SDK's exporters. An undefined value is
 * not written, as an undefined attribute is not.
 */
export interface FactWriter {
  fact(key: FactKey, value: FactValue | undefined): void;
}

/**
 * The attributes of one of the adapter's own hot spans (a request's server span, its answer's span,
 * an upstream call's span; docs/observability.md#how-spans-leave), kept in typed fields of an object
 * made for that span and written, key by known key, when the span ends: no attributes object is
 * built or grown on the event loop, and the encoder neither lists nor looks up keys. The attributes a
 * span is given besides (`Span.setAttribute`) follow them; the two never share a key.
 */
export interface SpanFacts {
  /** Writes every fact set, in the order the span lists them. */
  write(out: FactWriter): void;
}

/** Facts collected into an attributes object, in their order. */
class AttributesOut implements FactWriter {
  readonly attributes: Attributes = {};

  fact(key: FactKey, value: FactValue | undefined): void {
    if (value !== undefined) this.attributes[key.name] = typeof value === "object" ? [...value] : value;
  }
}

/** A span's facts as an attributes object (for the JSON encoder and the SDK's exporters). */
export function factsAsAttributes(facts: SpanFacts): Attributes {
  const out = new AttributesOut();
  facts.write(out);
  return out.attributes;
}
