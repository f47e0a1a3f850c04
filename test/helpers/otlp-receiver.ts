import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";

/**
 * A loopback OTLP/HTTP trace receiver, standing in for a collector (none is installable here): it
 * takes `POST /v1/traces` in both encodings the adapter can send — protobuf, decoded by the small
 * wire-format reader below, written from opentelemetry-proto's `trace.proto` and `common.proto`
 * field numbers rather than with the SDK's own serializer, and JSON (OTLP/JSON: hex ids, enum
 * numbers, 64-bit integers as strings) — and normalizes every span to one shape for assertions.
 */

/** A span as received, in one shape whatever the encoding. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  traceState: string;
  name: string;
  kind: "unspecified" | "internal" | "server" | "client" | "producer" | "consumer";
  /** Nanoseconds since the epoch. */
  start: bigint;
  end: bigint;
  attributes: Record<string, unknown>;
  events: { name: string; time: bigint; attributes: Record<string, unknown> }[];
  links: { traceId: string; spanId: string; attributes: Record<string, unknown> }[];
  status: { code: number; message: string };
  resource: Record<string, unknown>;
  scope: string;
}

/** One export request as it arrived. */
export interface ReceivedExport {
  contentType: string;
  headers: IncomingHttpHeaders;
  spans: ReceivedSpan[];
}

/** A running receiver. */
export interface OtlpReceiver {
  /** The base endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`); spans arrive at `{endpoint}/v1/traces`. */
  endpoint: string;
  exports: ReceivedExport[];
  /** Every span received so far. */
  spans(): ReceivedSpan[];
  /** Resolves with the spans received once `ready` holds of them (polling every 20 ms), or rejects after `timeoutMs`. */
  waitFor(ready: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  /** Makes the next exports fail with this status (or succeed again with null). */
  failWith(status: number | null): void;
  /** Stalls: exports are read but not answered (a collector that hangs) until `stall(false)`, which answers them. */
  stall(stalled: boolean): void;
  /** Exports read but not answered yet (while stalled). */
  readonly stalled: number;
  close(): Promise<void>;
}

const KINDS = ["unspecified", "internal", "server", "client", "producer", "consumer"] as const;

/** Starts a receiver on a loopback port. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const exports: ReceivedExport[] = [];
  let failure: number | null = null;
  let stalled: (() => void)[] | undefined;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      if (stalled) stalled.push(() => answer(request, Buffer.concat(chunks), response));
      else answer(request, Buffer.concat(chunks), response);
    });
  });
  /** Reads an export (gzip-compressed when its content-encoding says so) and answers it. */
  const answer = (request: IncomingMessage, raw: Buffer, response: ServerResponse) => {
    const body = request.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw;
    const contentType = String(request.headers["content-type"] ?? "");
    if (request.method !== "POST" || request.url !== "/v1/traces") {
      response.writeHead(404).end();
      return;
    }
    if (failure !== null) {
      response.writeHead(failure).end();
      return;
    }
    try {
      const spans = contentType.includes("json") ? fromJson(JSON.parse(body.toString("utf8"))) : fromProtobuf(body);
      exports.push({ contentType, headers: request.headers, spans });
    } catch (error) {
      response.writeHead(400, { "content-type": "text/plain" }).end(String(error));
      return;
    }
    // An empty ExportTraceServiceResponse: zero bytes in protobuf, `{}` in JSON.
    if (contentType.includes("json")) response.writeHead(200, { "content-type": "application/json" }).end("{}");
    else response.writeHead(200, { "content-type": "application/x-protobuf" }).end();
  };
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const all = () => exports.flatMap((received) => received.spans);
  return {
    endpoint: `http://127.0.0.1:${port}`,
    exports,
    spans: all,
    async waitFor(ready, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!ready(all())) {
        if (Date.now() > deadline) throw new Error(`spans not received in ${timeoutMs} ms; got: ${all().map((span) => span.name).join(", ")}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return all();
    },
    failWith(status) {
      failure = status;
    },
    stall(on) {
      const held = stalled ?? [];
      stalled = on ? held : undefined;
      if (!on) for (const release of held) release();
    },
    get stalled() {
      return stalled?.length ?? 0;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// ---- OTLP/JSON ----

type Json = Record<string, any>;

/** The spans of an OTLP/JSON export request (parsed), as received. */
export function fromJson(request: Json): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of request.resourceSpans ?? []) {
    const resource = jsonAttributes(resourceSpans.resource?.attributes);
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        spans.push({
          traceId: span.traceId ?? "",
          spanId: span.spanId ?? "",
          parentSpanId: span.parentSpanId ?? "",
          traceState: span.traceState ?? "",
          name: span.name,
          kind: KINDS[span.kind ?? 0] ?? "unspecified",
          start: BigInt(span.startTimeUnixNano ?? 0),
          end: BigInt(span.endTimeUnixNano ?? 0),
          attributes: jsonAttributes(span.attributes),
          events: (span.events ?? []).map((event: Json) => ({ name: event.name, time: BigInt(event.timeUnixNano ?? 0), attributes: jsonAttributes(event.attributes) })),
          links: (span.links ?? []).map((link: Json) => ({ traceId: link.traceId, spanId: link.spanId, attributes: jsonAttributes(link.attributes) })),
          status: { code: span.status?.code ?? 0, message: span.status?.message ?? "" },
          resource,
          scope: scopeSpans.scope?.name ?? "",
        });
      }
    }
  }
  return spans;
}

function jsonAttributes(list: Json[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((entry) => [entry.key, jsonValue(entry.value ?? {})]));
}

function jsonValue(value: Json): unknown {
  if ("stringValue" in value) return value.stringValue;
  if ("boolValue" in value) return value.boolValue;
  if ("intValue" in value) return Number(value.intValue);
  if ("doubleValue" in value) return Number(value.doubleValue);
  if ("arrayValue" in value) return (value.arrayValue.values ?? []).map(jsonValue);
  if ("kvlistValue" in value) return jsonAttributes(value.kvlistValue.values);
  return undefined;
}

// ---- OTLP/protobuf: a reader of the wire format (varint, 64-bit, length-delimited, 32-bit) ----

/** One field of a message: its number, and its value (a number or bigint for scalars, bytes for length-delimited). */
interface Field {
  number: number;
  value: bigint | Uint8Array;
}

function fieldsOf(bytes: Uint8Array): Field[] {
  const fields: Field[] = [];
  let at = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    while (true) {
      const byte = bytes[at++];
      if (byte === undefined) throw new Error("truncated varint");
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  const fixed = (size: number): bigint => {
    let result = 0n;
    for (let index = size - 1; index >= 0; index -= 1) result = (result << 8n) | BigInt(bytes[at + index] ?? 0);
    at += size;
    return result;
  };
  while (at < bytes.length) {
    const key = Number(varint());
    const number = key >> 3;
    switch (key & 7) {
      case 0:
        fields.push({ number, value: varint() });
        break;
      case 1:
        fields.push({ number, value: fixed(8) });
        break;
      case 2: {
        const length = Number(varint());
        fields.push({ number, value: bytes.subarray(at, at + length) });
        at += length;
        break;
      }
      case 5:
        fields.push({ number, value: fixed(4) });
        break;
      default:
        throw new Error(`unknown wire type ${key & 7}`);
    }
  }
  return fields;
}

const bytesOf = (fields: Field[], number: number): Uint8Array[] => fields.filter((field) => field.number === number).map((field) => field.value as Uint8Array);
const firstBytes = (fields: Field[], number: number): Uint8Array | undefined => bytesOf(fields, number)[0];
const text = (fields: Field[], number: number): string => Buffer.from(firstBytes(fields, number) ?? new Uint8Array()).toString("utf8");
const hex = (fields: Field[], number: number): string => Buffer.from(firstBytes(fields, number) ?? new Uint8Array()).toString("hex");
const scalar = (fields: Field[], number: number): bigint => (fields.find((field) => field.number === number)?.value as bigint | undefined) ?? 0n;

/** The spans of an OTLP/protobuf export request, as received. */
export function fromProtobuf(body: Uint8Array): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of bytesOf(fieldsOf(body), 1).map(fieldsOf)) {
    const resource = protoAttributes(fieldsOf(firstBytes(resourceSpans, 1) ?? new Uint8Array()), 1);
    for (const scopeSpans of bytesOf(resourceSpans, 2).map(fieldsOf)) {
      const scope = text(fieldsOf(firstBytes(scopeSpans, 1) ?? new Uint8Array()), 1);
      for (const span of bytesOf(scopeSpans, 2).map(fieldsOf)) {
        const status = fieldsOf(firstBytes(span, 15) ?? new Uint8Array());
        spans.push({
          traceId: hex(span, 1),
          spanId: hex(span, 2),
          parentSpanId: hex(span, 4),
          traceState: text(span, 3),
          name: text(span, 5),
          kind: KINDS[Number(scalar(span, 6))] ?? "unspecified",
          start: scalar(span, 7),
          end: scalar(span, 8),
          attributes: protoAttributes(span, 9),
          events: bytesOf(span, 11)
            .map(fieldsOf)
            .map((event) => ({ name: text(event, 2), time: scalar(event, 1), attributes: protoAttributes(event, 3) })),
          links: bytesOf(span, 13)
            .map(fieldsOf)
            .map((link) => ({ traceId: hex(link, 1), spanId: hex(link, 2), attributes: protoAttributes(link, 4) })),
          status: { code: Number(scalar(status, 3)), message: text(status, 2) },
          resource,
          scope,
        });
      }
    }
  }
  return spans;
}

/** The `KeyValue`s in field `number` of a message. */
function protoAttributes(fields: Field[], number: number): Record<string, unknown> {
  return Object.fromEntries(
    bytesOf(fields, number)
      .map(fieldsOf)
      .map((keyValue) => [text(keyValue, 1), protoValue(fieldsOf(firstBytes(keyValue, 2) ?? new Uint8Array()))]),
  );
}

/** An `AnyValue`: string 1, bool 2, int64 3, double 4, array 5, key-value list 6, bytes 7. */
function protoValue(fields: Field[]): unknown {
  const field = fields[0];
  if (!field) return undefined;
  switch (field.number) {
    case 1:
      return Buffer.from(field.value as Uint8Array).toString("utf8");
    case 2:
      return field.value === 1n;
    case 3:
      return Number(BigInt.asIntN(64, field.value as bigint));
    case 4: {
      const buffer = Buffer.alloc(8);
      buffer.writeBigUInt64LE(field.value as bigint);
      return buffer.readDoubleLE();
    }
    case 5:
      return bytesOf(fieldsOf(field.value as Uint8Array), 1).map((value) => protoValue(fieldsOf(value)));
    case 6:
      return protoAttributes(fieldsOf(field.value as Uint8Array), 1);
    default:
      return Buffer.from(field.value as Uint8Array);
  }
}
