import type { Attributes } from "@opentelemetry/api";
import { jsonAttributes } from "./otlp-span-json.js";
import { writeAttributes } from "./otlp-span-protobuf.js";
import { ProtobufWriter, WIRE } from "./protobuf-writer.js";
import type { OtlpProtocol } from "./tracing-settings.js";

/** The instrumentation scope every span of the adapter carries. */
export interface Scope {
  name: string;
  version: string;
}

/**
 * Export requests (an ExportTraceServiceRequest: one ResourceSpans of one ScopeSpans) around
 * spans already encoded one by one (`writeProtobufSpan`, `jsonSpan`): the resource and the scope
 * are encoded once, as the SDK's serializers encode them, and each batch costs a copy of its
 * spans' bytes. Chunks of JSON spans are `,`-separated objects, each chunk starting with a comma.
 */
export class ExportRequests {
  private readonly head: Uint8Array;
  private readonly scope: Uint8Array;
  private readonly tail: Uint8Array;

  constructor(
    readonly protocol: OtlpProtocol,
    resource: Attributes,
    scope: Scope,
  ) {
    if (protocol === "http/json") {
      const attributes = jsonAttributes(resource, Infinity, Infinity).list;
      const resourceJson = JSON.stringify({ attributes, droppedAttributesCount: 0 });
      this.head = Buffer.from(`{"resourceSpans":[{"resource":${resourceJson},"scopeSpans":[{"scope":${JSON.stringify(scope)},"spans":[`);
      this.scope = new Uint8Array();
      this.tail = Buffer.from("]}]}]}");
      return;
    }
    // Resource (ResourceSpans field 1): its attributes and a dropped count of 0, as the SDK writes it.
    const head = new ProtobufWriter(1024);
    head.tag(1, WIRE.bytes);
    const start = head.begin();
    writeAttributes(head, resource, 1, Infinity, Infinity);
    head.tag(2, WIRE.varint);
    head.varint(0);
    head.end(start);
    this.head = Uint8Array.from(head.written());
    // InstrumentationScope (ScopeSpans field 1): name and version.
    const scoped = new ProtobufWriter(256);
    scoped.tag(1, WIRE.bytes);
    const scopeStart = scoped.begin();
    scoped.tag(1, WIRE.bytes);
    scoped.string(scope.name);
    if (scope.version) {
      scoped.tag(2, WIRE.bytes);
      scoped.string(scope.version);
    }
    scoped.end(scopeStart);
    this.scope = Uint8Array.from(scoped.written());
    this.tail = new Uint8Array();
  }

  /** The request body of a batch: `chunks` of encoded spans, in order. */
  build(chunks: readonly Uint8Array[]): Uint8Array {
    const spans = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
    if (this.protocol === "http/json") {
      const body = new ProtobufWriter(this.head.length + spans + this.tail.length);
      body.raw(this.head);
      // Each chunk starts with a comma: the first one's is dropped.
      chunks.forEach((chunk, index) => body.raw(index === 0 ? chunk.subarray(1) : chunk));
      body.raw(this.tail);
      return body.written();
    }
    const scopeSpans = this.scope.length + spans;
    const resourceSpans = this.head.length + 1 + varintSize(scopeSpans) + scopeSpans;
    const body = new ProtobufWriter(1 + varintSize(resourceSpans) + resourceSpans);
    body.tag(1, WIRE.bytes);
    body.varint(resourceSpans);
    body.raw(this.head);
    body.tag(2, WIRE.bytes);
    body.varint(scopeSpans);
    body.raw(this.scope);
    for (const chunk of chunks) body.raw(chunk);
    return body.written();
  }
}

function varintSize(value: number): number {
  let size = 1;
  while (value >= 2 ** (7 * size)) size += 1;
  return size;
}
