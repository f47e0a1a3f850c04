import { TraceState } from "@opentelemetry/core";
import { JsonTraceSerializer, ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { describe, expect, it } from "vitest";
import { DEFAULT_SPAN_LIMITS, readSpanLimits } from "../../../src/telemetry/export-settings.js";
import { AttributeCache } from "../../../src/telemetry/attribute-cache.js";
import { readableSpan } from "../../../src/telemetry/in-process-export.js";
import { ExportRequests } from "../../../src/telemetry/otlp-request.js";
import { writeJsonSpan } from "../../../src/telemetry/otlp-span-json.js";
import { writeProtobufSpan } from "../../../src/telemetry/otlp-span-protobuf.js";
import { ProtobufWriter } from "../../../src/telemetry/protobuf-writer.js";
import { type FinishedSpan, RecordedSpan, type TraceClock, withFacts } from "../../../src/telemetry/recorded-span.js";
import { factKey, type FactWriter, type SpanFacts } from "../../../src/telemetry/span-facts.js";
import { fromJson, fromProtobuf } from "../../helpers/otlp-receiver.js";

// The adapter encodes its spans itself (docs/observability.md#how-spans-leave); a collector must
// receive the same bytes the SDK's serializers (@opentelemetry/otlp-transformer) would send for
// the same spans.

const RESOURCE = { "service.name": "adapter-under-test", "service.version": "1.2.3", "process.pid": 4242, "telemetry.sdk.language": "nodejs" };
const SCOPE = { name: "workspace-openai-adapter", version: "1.2.3" };
const CLOCK: TraceClock = { epochMs: 1_764_000_000_123, at: 1000.25 };

const METHOD = factKey("http.request.method");
const URL_FULL = factKey("url.full");
const PORT = factKey("server.port");
const RESEND = factKey("http.request.resend_count");
const STATUS = factKey("http.response.status_code");
const RATIO = factKey("workspace_adapter.ratio");
const REUSED = factKey("workspace_adapter.reused");
const IDS = factKey("workspace_adapter.query.ids");
const NOTE = factKey("workspace_adapter.note");

/** Facts of every value type a span's facts have, some unset (not written), one long and non-ASCII. */
class CallFacts implements SpanFacts {
  status: number | undefined = undefined;

  write(out: FactWriter): void {
    out.fact(METHOD, "GET");
    out.fact(URL_FULL, "http://127.0.0.1:8080/v1/queries/q1?cursor=Zm9v");
    out.fact(PORT, 8080);
    out.fact(RESEND, undefined);
    out.fact(STATUS, this.status);
    out.fact(RATIO, 0.5);
    out.fact(REUSED, false);
    out.fact(IDS, ["q1", "q2"]);
    out.fact(NOTE, "Grüße ✓ ".repeat(30));
  }
}

/** Spans as the adapter records them, covering every field and value type the encoders write, attributes and facts. */
function recordedSpans(): FinishedSpan[] {
  const ended: FinishedSpan[] = [];
  const sink = { ended: (span: FinishedSpan) => ended.push(span) };
  const server = new RecordedSpan(
    sink,
    "POST",
    1,
    { traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", traceFlags: 1, traceState: new TraceState("vendor=abc,other=x1") },
    { spanId: "00f067aa0ba902b7", isRemote: true },
    CLOCK,
    { "http.request.method": "POST", "url.path": "/v1/chat/completions", "user_agent.original": "Müller's client ✓", "workspace_adapter.request_id": "r".repeat(200) },
    undefined,
  );
  const answer = new RecordedSpan(sink, "chat acme/reason", 0, { traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "53995c3f42cd8ad8", traceFlags: 1 }, { spanId: "b7ad6b7169203331", isRemote: false }, CLOCK, {
    "gen_ai.operation.name": "chat",
    "gen_ai.request.stream": true,
    "gen_ai.request.choice.count": 2,
    "gen_ai.usage.input_tokens": 4_294_967_301,
    "workspace_adapter.temperature": 0.25,
    "workspace_adapter.offset": -3,
    "workspace_adapter.query.ids": ["q1", "q2"],
    "workspace_adapter.flags": [true, false],
    "workspace_adapter.sizes": [1, 2.5],
    "workspace_adapter.none": [],
    "workspace_adapter.unset": undefined,
  }, undefined);
  answer.addEvent("workspace_adapter.first_step", { "workspace_adapter.choice": 0 });
  answer.addEvent("workspace_adapter.first_text");
  answer.setAttribute("gen_ai.input.messages", JSON.stringify([{ role: "user", parts: [{ type: "text", content: "Wie viele Urlaubstage? ".repeat(20) }] }]));
  answer.setStatus({ code: 2, message: "the query failed" });
  answer.end(1250.5);
  const poll = new RecordedSpan(sink, "poll queries", 0, { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "e457b5a2e4d86bd1", traceFlags: 1 }, undefined, CLOCK, { "workspace_adapter.poll.waiting": 1 }, [
    { context: { traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "53995c3f42cd8ad8", traceFlags: 1 } },
    { context: { traceId: "1af7651916cd43dd8448eb211c80319c", spanId: "63995c3f42cd8ad8", traceFlags: 0, isRemote: true, traceState: new TraceState("k=v") }, attributes: { note: "linked" } },
  ]);
  poll.end(1300);
  server.updateName("POST /v1/chat/completions");
  server.setAttribute("http.response.status_code", 200);
  server.end(1400.000001);
  const call = new RecordedSpan(sink, "GET /v1/queries/{id}", 2, { traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "c3995c3f42cd8ad8", traceFlags: 1 }, { spanId: "53995c3f42cd8ad8", isRemote: false }, CLOCK, { "workspace_adapter.extra": "besides the facts" }, undefined);
  withFacts(call, new CallFacts()).status = 200;
  call.setAttribute("workspace_adapter.later", 3);
  call.end(1500);
  return ended;
}

/**
 * Spans that repeat attributes as the adapter's do, span after span: the same keys with the same
 * values, a key whose values keep changing (an id, a count), long strings, and values of every type.
 */
function repeatingSpans(count: number): FinishedSpan[] {
  const ended: FinishedSpan[] = [];
  const sink = { ended: (span: FinishedSpan) => ended.push(span) };
  for (let index = 0; index < count; index += 1) {
    const context = { traceId: "0af7651916cd43dd8448eb211c80319c", spanId: (0x1000 + index).toString(16).padStart(16, "0"), traceFlags: 1 };
    const span = new RecordedSpan(sink, "chat acme", 0, context, undefined, CLOCK, {
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": index % 3 === 0 ? "acme" : "acme/reason",
      "gen_ai.request.stream": index % 2 === 0,
      "gen_ai.response.id": `chatcmpl-${index}`,
      "gen_ai.usage.output_tokens": index,
      "http.response.status_code": -200,
      "workspace_adapter.temperature": 0.25,
      "workspace_adapter.note": "ü".repeat(70),
      "workspace_adapter.modes": ["quick", "reason"],
    }, undefined);
    span.end(1000.5 + index);
  }
  return ended;
}

/** The request body the adapter sends for `spans` in `protocol` (with the encoder's attribute cache, when given). */
function adapterBody(protocol: "http/protobuf" | "http/json", spans: readonly FinishedSpan[], cache?: AttributeCache): Buffer {
  const chunk = new ProtobufWriter(16);
  for (const span of spans) {
    if (protocol === "http/json") writeJsonSpan(chunk, span, DEFAULT_SPAN_LIMITS);
    else writeProtobufSpan(chunk, span, DEFAULT_SPAN_LIMITS, cache);
  }
  return Buffer.from(new ExportRequests(protocol, RESOURCE, SCOPE).build([chunk.written()]));
}

/** The request body the SDK's serializer gives for the same spans. */
function sdkBody(protocol: "http/protobuf" | "http/json", spans: readonly FinishedSpan[]): Buffer {
  const resource = resourceFromAttributes(RESOURCE);
  const readable = spans.map((span) => readableSpan(span, resource, SCOPE));
  return Buffer.from((protocol === "http/json" ? JsonTraceSerializer : ProtobufTraceSerializer).serializeRequest(readable) as Uint8Array);
}

describe("the OTLP encoding of spans", () => {
  it("is byte for byte the SDK's protobuf (every value type, events, links, trace state, status, long and non-ASCII strings)", () => {
    const spans = recordedSpans();
    expect(adapterBody("http/protobuf", spans).toString("hex")).toBe(sdkBody("http/protobuf", spans).toString("hex"));
  });

  it("is the same with the encoder's attribute cache, span after span (values remembered, ids and long strings written each time)", () => {
    const cache = new AttributeCache();
    const spans = [...recordedSpans(), ...repeatingSpans(80), ...recordedSpans()];
    // Twice through one cache: the second pass copies what the first remembered.
    for (let pass = 0; pass < 2; pass += 1) {
      expect(adapterBody("http/protobuf", spans, cache).toString("hex")).toBe(sdkBody("http/protobuf", spans).toString("hex"));
    }
  });

  it("is the SDK's JSON, text for text", () => {
    const spans = recordedSpans();
    expect(adapterBody("http/json", spans).toString("utf8")).toBe(sdkBody("http/json", spans).toString("utf8"));
  });

  it("splits spans into chunks freely: a batch of chunks is the batch of its spans", () => {
    const spans = recordedSpans();
    for (const protocol of ["http/protobuf", "http/json"] as const) {
      const chunks = spans.map((span) => {
        const chunk = new ProtobufWriter(16);
        if (protocol === "http/json") writeJsonSpan(chunk, span, DEFAULT_SPAN_LIMITS);
        else writeProtobufSpan(chunk, span, DEFAULT_SPAN_LIMITS);
        return chunk.written();
      });
      expect(Buffer.from(new ExportRequests(protocol, RESOURCE, SCOPE).build(chunks))).toEqual(adapterBody(protocol, spans));
    }
  });

  it("keeps spans within the span limits, counting what it drops (the oldest events and links; strings cut)", () => {
    const warnings: string[] = [];
    const limits = readSpanLimits(
      { OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT: "2", OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: "4", OTEL_SPAN_EVENT_COUNT_LIMIT: "1", OTEL_SPAN_LINK_COUNT_LIMIT: "1", OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT: "0" },
      warnings,
    );
    expect(warnings).toEqual([]);
    const [answer, poll] = recordedSpans();
    const chunk = new ProtobufWriter(16);
    writeJsonSpan(chunk, answer as FinishedSpan, limits);
    writeJsonSpan(chunk, poll as FinishedSpan, limits);
    const body = JSON.parse(Buffer.from(new ExportRequests("http/json", RESOURCE, SCOPE).build([chunk.written()])).toString("utf8"));
    const [limitedAnswer, limitedPoll] = body.resourceSpans[0].scopeSpans[0].spans;
    expect(limitedAnswer.attributes).toEqual([
      { key: "gen_ai.operation.name", value: { stringValue: "chat" } },
      { key: "gen_ai.request.stream", value: { boolValue: true } },
    ]);
    expect(limitedAnswer.droppedAttributesCount).toBe(9);
    expect(limitedAnswer.events.map((event: { name: string }) => event.name)).toEqual(["workspace_adapter.first_text"]);
    expect(limitedAnswer.droppedEventsCount).toBe(1);
    expect(limitedPoll.links.map((link: { spanId: string }) => link.spanId)).toEqual(["63995c3f42cd8ad8"]);
    expect(limitedPoll.links[0].attributes).toEqual([{ key: "note", value: { stringValue: "link" } }]);
    expect(limitedPoll.droppedLinksCount).toBe(1);
  });

  it("keeps a span's facts within the limits too, first, then its other attributes, in both encodings", () => {
    const limits = readSpanLimits({ OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT: "9", OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: "12" }, []);
    const call = recordedSpans().at(-1) as FinishedSpan;
    const protobuf = new ProtobufWriter(16);
    writeProtobufSpan(protobuf, call, limits, new AttributeCache());
    const json = new ProtobufWriter(16);
    writeJsonSpan(json, call, limits);
    const [fromProto] = fromProtobuf(new ExportRequests("http/protobuf", RESOURCE, SCOPE).build([protobuf.written()]));
    const [fromText] = fromJson(JSON.parse(Buffer.from(new ExportRequests("http/json", RESOURCE, SCOPE).build([json.written()])).toString("utf8")));
    const expected = {
      "http.request.method": "GET",
      "url.full": "http://127.0",
      "server.port": 8080,
      "http.response.status_code": 200,
      "workspace_adapter.ratio": 0.5,
      "workspace_adapter.reused": false,
      "workspace_adapter.query.ids": ["q1", "q2"],
      "workspace_adapter.note": "Grüße ✓ Grüß",
      "workspace_adapter.extra": "besides the ",
    };
    expect(fromProto?.attributes).toEqual(expected);
    expect(fromText?.attributes).toEqual(expected);
    const dropped = JSON.parse(Buffer.from(new ExportRequests("http/json", RESOURCE, SCOPE).build([json.written()])).toString("utf8")).resourceSpans[0].scopeSpans[0].spans[0].droppedAttributesCount;
    expect(dropped).toBe(1);
  });
});
